"""cursor.com: login token → cookie, the usage-export sync, plan quota.

Names are loaded on first use (PEP 562): a status that needs no sync must not import httpx
(slow to import), which the quota and the sync client pull in.
"""

from typing import TYPE_CHECKING

from codeburn.providers import lazy_surface

if TYPE_CHECKING:
    from codeburn.sync.cursor_sync import SyncError, maybe_sync
    from codeburn.sync.quota import read_quota
    from codeburn.sync.status_block import cursor_sync_block
else:  # imported on first use (codeburn.providers.lazy)
    __getattr__ = lazy_surface(__name__)

__all__ = [
    "SyncError",
    "cursor_sync_block",
    "maybe_sync",
    "read_quota",
]
