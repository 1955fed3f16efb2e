"""cursor.com: login token → cookie, the usage-export sync, plan quota.

Names are loaded on first use (PEP 562): a status that needs no sync must not import httpx
(slow to import), which the quota and the sync client pull in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from codeburn.sync.cursor_sync import SyncError, maybe_sync
    from codeburn.sync.quota import read_quota
    from codeburn.sync.status_block import cursor_sync_block

_WHERE: Final = {
    "SyncError": "codeburn.sync.cursor_sync",
    "maybe_sync": "codeburn.sync.cursor_sync",
    "read_quota": "codeburn.sync.quota",
    "cursor_sync_block": "codeburn.sync.status_block",
}

__all__ = [
    "SyncError",
    "cursor_sync_block",
    "maybe_sync",
    "read_quota",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
