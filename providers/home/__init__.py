"""What Cursor keeps under `~/.cursor`: agent transcripts and Cursor Agent CLI stores."""

# Imported at once: the CLI's and the server's start import these modules anyway.
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
