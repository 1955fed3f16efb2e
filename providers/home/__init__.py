"""What Cursor keeps under `~/.cursor`: agent transcripts and Cursor Agent CLI stores."""

from typing import TYPE_CHECKING

from codeburn.providers.lazy import lazy_surface

if TYPE_CHECKING:
    from codeburn.providers.home.cli_store import CliSession
    from codeburn.providers.home.reader import (
        AgentRead,
        AgentReader,
        AgentSnapshot,
        TranscriptRead,
        take_snapshot,
    )
else:  # imported on first use (see codeburn.providers.lazy)
    __getattr__ = lazy_surface(
        __name__,
        {
            "codeburn.providers.home.cli_store": ("CliSession",),
            "codeburn.providers.home.reader": (
                "AgentRead",
                "AgentReader",
                "AgentSnapshot",
                "TranscriptRead",
                "take_snapshot",
            ),
        },
    )

__all__ = [
    "AgentRead",
    "AgentReader",
    "AgentSnapshot",
    "CliSession",
    "TranscriptRead",
    "take_snapshot",
]
