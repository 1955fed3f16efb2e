"""The `cursorSync` block of reports and status (docs/report-json.md#cursorsync-block),
computed without any network call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codeburn.cache import cursor_sync_enabled
from codeburn.providers import iso_utc, read_access_token, token_from_string
from codeburn.providers import now_ms as clock_ms
from codeburn.sync.state import ErrorCode, SyncState, load_state

ERROR_TEXTS: dict[ErrorCode, str] = {
    "login": "Cursor login expired, open Cursor to sign in again",
    "network": "Couldn't reach cursor.com, will retry",
    "export": "Couldn't read the usage export from cursor.com, will retry",
}


def _block(
    enabled: bool, state: str, state_file: SyncState, code: ErrorCode | None = None
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "enabled": enabled,
        "state": state,
        "lastSuccessAt": (
            iso_utc(state_file.last_success_ms) if state_file.last_success_ms is not None else None
        ),
        "exactThrough": (
            iso_utc(state_file.exact_through_ms)
            if state_file.exact_through_ms is not None
            else None
        ),
    }
    if code is not None:
        block["errorCode"] = code
        block["error"] = ERROR_TEXTS[code]
    elif state == "ok" and state_file.incomplete is not None:
        served, count = state_file.incomplete  # the last read ended before cursor.com's count
        block["incomplete"] = {"served": served, "count": count}
    return block


def _ever_synced(state: SyncState) -> bool:
    return state.last_success_ms is not None or state.last_attempt_ms is not None


def cursor_sync_block(db_path: Path, *, now_ms: int | None = None) -> dict[str, Any] | None:
    """docs/report-json.md#cursorsync-block: off → no-login → error → ok / syncing-never; None
    when signed out and never synced."""
    now = clock_ms() if now_ms is None else now_ms
    state = load_state()
    raw = read_access_token(db_path)
    if raw is None and not _ever_synced(state):
        return None
    token = token_from_string(raw) if raw is not None else None
    if not cursor_sync_enabled():
        return _block(False, "off", state)
    if token is None or token.is_expired(now):
        return _block(True, "no-login", state, "login")
    code = state.error_code
    if code == "login" and state.rejected_exp != token.exp:
        code = None  # recorded for an older token
    if code is not None:
        return _block(True, "error", state, code)
    return _block(True, "ok" if state.last_success_ms is not None else "syncing-never", state)
