"""Which log records may reach stderr or the editor's log: below WARNING, only our own.

httpx, httpcore and h11 log request and response headers at DEBUG (a `Set-Cookie` or
`WWW-Authenticate` echoing the session cookie), filelock and asyncio log noise; none of that
is ours to print at any level, `CODEBURN_LOG=debug` included.
"""

from __future__ import annotations

import logging
import os
from typing import Final

OURS: Final = ("codeburn",)


def debug_wanted() -> bool:
    """`CODEBURN_LOG=debug` (any case, spaces ignored)."""
    return os.environ.get("CODEBURN_LOG", "").strip().lower() == "debug"


class OwnRecordsOnly(logging.Filter):
    """Records below WARNING pass only from the named loggers (and their children)."""

    def __init__(self, names: tuple[str, ...] = OURS) -> None:
        super().__init__()
        self._names = names

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        name = record.name
        return any(name == own or name.startswith(f"{own}.") for own in self._names)
