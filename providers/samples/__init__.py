"""Writers of sample, test and bench data (never imported by the product's readers)."""

from codeburn.providers.samples.agent_logs_writer import AgentLogsSpec, write_agent_logs
from codeburn.providers.samples.cursor3 import Cursor3Spec, generate_cursor3_profile
from codeburn.providers.samples.generator import (
    SampleSpec,
    generate_sample_profile,
    write_sample_export,
)

__all__ = [
    "AgentLogsSpec",
    "Cursor3Spec",
    "SampleSpec",
    "generate_cursor3_profile",
    "generate_sample_profile",
    "write_agent_logs",
    "write_sample_export",
]
