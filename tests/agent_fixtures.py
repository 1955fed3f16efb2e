"""Claude Code and Codex log lines in the shapes their tools write (docs/other-tools.md), for the
shapes the shared real logs lack: `progress` copies, `<session>/subagents/` files, 1-hour cache
writes, `<synthetic>` lines, lines without `requestId`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "5d1c8a4e-0000-4000-8000-000000000001"
CWD = "/home/dev/shop"


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(jsonl(lines))
    return path


def usage(
    inp: int = 10,
    out: int = 100,
    read: int = 1000,
    write_5m: int = 0,
    write_1h: int = 0,
    *,
    parts: bool = True,
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "input_tokens": inp,
        "cache_creation_input_tokens": write_5m + write_1h,
        "cache_read_input_tokens": read,
        "output_tokens": out,
        "service_tier": "standard",
    }
    if parts:
        found["cache_creation"] = {
            "ephemeral_5m_input_tokens": write_5m,
            "ephemeral_1h_input_tokens": write_1h,
        }
    return found


def assistant(
    message_id: str,
    request_id: str | None,
    at: str,
    tokens: dict[str, Any],
    *,
    model: str = "claude-sonnet-4-5-20250929",
    session: str = SESSION,
    cwd: str = CWD,
    sidechain: bool = False,
) -> dict[str, Any]:
    line: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": sidechain,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.30",
        "message": {
            "model": model,
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "usage": tokens,
        },
        "type": "assistant",
        "uuid": f"u-{message_id}-{request_id}-{at}",
        "timestamp": at,
    }
    if request_id is not None:
        line["requestId"] = request_id
    return line


def progress(agent_id: str, copied: dict[str, Any], *, session: str = SESSION) -> dict[str, Any]:
    """A parent's `progress` line copying one of a sub-agent's messages (Claude Code 2.1.x)."""
    return {
        "type": "progress",
        "parentToolUseID": "toolu_01",
        "toolUseID": "agent_msg_01",
        "sessionId": session,
        "cwd": CWD,
        "timestamp": copied["timestamp"],
        "data": {
            "type": "agent_progress",
            "agentId": agent_id,
            "prompt": "look",
            "message": copied,
        },
    }


def user(text: str, at: str, *, session: str = SESSION, meta: bool = False) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "user",
        "sessionId": session,
        "cwd": CWD,
        "message": {"role": "user", "content": text},
        "timestamp": at,
    }
    if meta:
        line["isMeta"] = True
    return line


def summary(text: str) -> dict[str, Any]:
    return {"type": "summary", "summary": text, "leafUuid": "leaf-1"}


def session_meta(session: str, cwd: str, at: str) -> dict[str, Any]:
    return {
        "timestamp": at,
        "type": "session_meta",
        "payload": {"id": session, "timestamp": at, "cwd": cwd, "cli_version": "0.93.0"},
    }


def user_message(text: str, at: str) -> dict[str, Any]:
    return {
        "timestamp": at,
        "type": "event_msg",
        "payload": {"type": "user_message", "message": text},
    }


def turn_context(model: str, at: str) -> dict[str, Any]:
    return {"timestamp": at, "type": "turn_context", "payload": {"cwd": CWD, "model": model}}


def token_count(
    at: str, total: tuple[int, int, int, int] | None, last: tuple[int, int, int, int] | None = None
) -> dict[str, Any]:
    """(input, cached input, output, reasoning) running totals; None: `info: null`."""

    def block(t: tuple[int, int, int, int]) -> dict[str, int]:
        return {
            "input_tokens": t[0],
            "cached_input_tokens": t[1],
            "output_tokens": t[2],
            "reasoning_output_tokens": t[3],
            "total_tokens": t[0] + t[2],
        }

    info = None
    if total is not None:
        info = {"total_token_usage": block(total), "last_token_usage": block(last or total)}
    return {"timestamp": at, "type": "event_msg", "payload": {"type": "token_count", "info": info}}
