"""The usage service: local + imported figures → days → the report and status objects."""

from codeburn.server.service.alerts import combined_message
from codeburn.server.service.forecast import forecast_lines
from codeburn.server.service.formatting import (
    format_money,
    format_tokens,
    local_estimate_note,
    split_money,
    split_text,
)
from codeburn.server.service.json_out import dumps
from codeburn.server.service.periods import (
    PERIODS,
    PeriodError,
    named_period,
    period_title,
    resolve_period,
)
from codeburn.server.service.plain_text import plain, title_text
from codeburn.server.service.report import WARNING_SHARE, build_status
from codeburn.server.service.usage import UsageService

__all__ = [
    "PERIODS",
    "WARNING_SHARE",
    "PeriodError",
    "UsageService",
    "build_status",
    "combined_message",
    "dumps",
    "forecast_lines",
    "format_money",
    "format_tokens",
    "local_estimate_note",
    "named_period",
    "period_title",
    "plain",
    "resolve_period",
    "split_money",
    "split_text",
    "title_text",
]
