"""What Cursor keeps under `~/.cursor`: agent transcripts and Cursor Agent CLI stores."""

from codeburn.providers.home.cli_store import CliSession
from codeburn.providers.home.reader import (
    AgentRead,
    AgentReader,
    AgentSnapshot,
    TranscriptRead,
    take_snapshot,
)

__all__ = [
    "AgentRead",
    "AgentReader",
    "AgentSnapshot",
    "CliSession",
    "TranscriptRead",
    "take_snapshot",
]
