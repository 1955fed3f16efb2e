"""The shapes of `initialize` params that the bootstrap's hand-made answer reads (no pygls).

Kept apart so that the bootstrap and pygls' checked protocol (`protocol.py`) both ask it
without importing each other.
"""

from __future__ import annotations

from typing import Any, Final

_CAPABILITY_GROUPS: Final = ("general", "workspace", "window", "textDocument", "notebookDocument")


def answerable(params: Any) -> bool:
    """Whether `initialize` params have the shapes this hand-made answer reads.

    Anything else is left to pygls, whose checked protocol answers `-32602` naming the type, so
    that the client can try again (a wrong answer sent here could not be taken back).
    """
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return False
    capabilities = params["capabilities"]
    if any(
        capabilities.get(key) is not None and not isinstance(capabilities[key], dict)
        for key in _CAPABILITY_GROUPS
    ):
        return False
    if params.get("clientInfo") is not None and not isinstance(params["clientInfo"], dict):
        return False
    general = capabilities.get("general") or {}
    encodings = general.get("positionEncodings")
    if encodings is not None and not (
        isinstance(encodings, list) and all(isinstance(e, str) for e in encodings)
    ):
        return False
    process_id = params.get("processId")
    return process_id is None or (isinstance(process_id, int) and not isinstance(process_id, bool))
