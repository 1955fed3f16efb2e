"""Cursor's usage export (CSV): the file, its rows, team exports."""

# Imported at once: the CLI's and the server's start import these modules anyway.
from codeburn.providers.exports.digests import DigestIndex
from codeburn.providers.exports.export_file import open_export, read_export
from codeburn.providers.exports.team import ChooseUserError, chosen_user, one_persons_rows
from codeburn.providers.exports.usage_csv import (
    CsvFormatError,
    UsageRow,
    billed_amount,
    identity,
    is_user_api_key,
    iter_csv,
    normalise_model,
    parse_csv,
    row_to_call,
)
from codeburn.providers.exports.usage_events import (
    EventDetail,
    EventShapeError,
    clean_text,
    one_persons_events,
    parse_events,
)

__all__ = [
    "ChooseUserError",
    "CsvFormatError",
    "DigestIndex",
    "EventDetail",
    "EventShapeError",
    "UsageRow",
    "billed_amount",
    "chosen_user",
    "clean_text",
    "identity",
    "is_user_api_key",
    "iter_csv",
    "normalise_model",
    "one_persons_events",
    "one_persons_rows",
    "open_export",
    "parse_csv",
    "parse_events",
    "read_export",
    "row_to_call",
]
