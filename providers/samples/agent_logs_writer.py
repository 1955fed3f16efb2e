"""Claude Code and Codex histories in the tools' own shapes, for the demo and the bench (never
the user's own logs). Realistic line sizes: most lines are small, tool results carry large
outputs, and a few sessions are long; streaming copies of one request, sub-agent files, 1-hour
cache writes and Codex's doubled token_count events are all written."""

from __future__ import annotations

import json
import random
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codeburn.providers.samples.titles import TITLES

CLAUDE_MODELS: Final = (
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-5-20251101",
    "claude-haiku-4-5-20251001",
)
CODEX_MODELS: Final = ("gpt-5-codex", "gpt-5.1-codex", "gpt-5.2-codex")
_MINUTE: Final = 60_000


@dataclass(frozen=True, slots=True)
class AgentLogsSpec:
    now_ms: int
    folders: tuple[str, ...] = ("/home/dev/web-app", "/home/dev/api-server")
    days: int = 14
    claude_sessions: int = 6
    codex_sessions: int = 4
    requests: tuple[int, int] = (4, 30)  # per session
    tool_output: tuple[int, int] = (200, 4000)  # characters of a tool result line
    seed: int = 7


@dataclass(slots=True)
class AgentLogsInfo:
    claude_files: int = 0
    codex_files: int = 0
    codex_requests: int = 0
    bytes: int = 0


def _iso(ms: int) -> str:
    from datetime import UTC, datetime  # noqa: PLC0415

    return (
        datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    )


def _prompt(key: str) -> str:
    """A session's first prompt, as people write them (the title tools show), fixed by `key`."""
    return TITLES[zlib.crc32(key.encode()) % len(TITLES)]


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


class _Claude:
    def __init__(self, rng: random.Random, spec: AgentLogsSpec) -> None:
        self.rng, self.spec = rng, spec
        self.start = spec.now_ms

    def usage(self) -> dict[str, Any]:
        rng = self.rng
        write_1h = rng.choice((0, 0, 0, rng.randint(1000, 20000)))
        write_5m = rng.randint(0, 8000)
        return {
            "input_tokens": rng.randint(1, 40),
            "cache_creation_input_tokens": write_5m + write_1h,
            "cache_read_input_tokens": rng.randint(5000, 120000),
            "cache_creation": {
                "ephemeral_5m_input_tokens": write_5m,
                "ephemeral_1h_input_tokens": write_1h,
            },
            "output_tokens": rng.randint(5, 3000),
            "service_tier": "standard",
        }

    def gap(self, n: int) -> int:
        """The longest pause between requests: a long session's last one is still in the past
        (whatever the start, within the last hour before `now_ms`)."""
        return max(2_000, min(90_000, (self.spec.now_ms - self.start - 60 * _MINUTE) // n))

    def session(self, session: str, cwd: str, start_ms: int, n: int, sidechain: bool) -> bytes:
        rng, out = self.rng, bytearray()
        self.start = start_ms
        common = {"cwd": cwd, "sessionId": session, "version": "2.1.30", "isSidechain": sidechain}
        ms = start_ms
        if not sidechain:
            rng.randint(1, 9)  # kept: the stream of every later value stays as it was
            text = _prompt(session)
            out += _line(
                {
                    **common,
                    "type": "user",
                    "timestamp": _iso(ms),
                    "message": {"role": "user", "content": text},
                }
            )
        model = rng.choice(CLAUDE_MODELS)
        for i in range(n):
            ms += rng.randint(1_000, self.gap(n))
            usage = self.usage()
            message_id, request_id = (
                f"msg_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}",
                f"req_{i}_{session[:8]}",
            )
            final = usage["output_tokens"]
            for copy in range(rng.choice((1, 1, 2, 3))):  # streaming rewrites, output growing
                usage = {
                    **usage,
                    "output_tokens": max(1, final >> (2 - copy)) if copy < 2 else final,
                }
                out += _line(
                    {
                        **common,
                        "type": "assistant",
                        "timestamp": _iso(ms + copy * 300),
                        "requestId": request_id,
                        "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                        "message": {
                            "id": message_id,
                            "model": model,
                            "role": "assistant",
                            "type": "message",
                            "usage": usage,
                            "content": [{"type": "text", "text": "done"}],
                        },
                    }
                )
            result = "x" * rng.randint(*self.spec.tool_output)
            out += _line(
                {
                    **common,
                    "type": "user",
                    "timestamp": _iso(ms + 1000),
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": result}],
                    },
                }
            )
        return bytes(out)


def write_agent_logs(claude_root: Path, codex_root: Path, spec: AgentLogsSpec) -> AgentLogsInfo:
    """A Claude Code history under `claude_root/projects/` and a Codex one under
    `codex_root/sessions/`, over the `spec.days` days before `spec.now_ms`."""
    rng = random.Random(spec.seed)
    info = AgentLogsInfo()
    claude = _Claude(rng, spec)
    first_ms = spec.now_ms - spec.days * 24 * 60 * _MINUTE
    for s in range(spec.claude_sessions):
        cwd = spec.folders[s % len(spec.folders)]
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        n = rng.randint(*spec.requests)
        start = rng.randint(first_ms, max(first_ms, spec.now_ms - n * 4_000 - 120 * _MINUTE))
        folder = claude_root / "projects" / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        data = claude.session(session, cwd, start, n, sidechain=False)
        (folder / f"{session}.jsonl").write_bytes(data)
        info.claude_files += 1
        info.bytes += len(data)
        if s % 3 == 0:  # a sub-agent in the session's own folder (Claude Code 2.1.x)
            sub = claude.session(session, cwd, start + _MINUTE, rng.randint(2, 6), sidechain=True)
            path = folder / session / "subagents" / f"agent-a{s:05x}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(sub)
            info.claude_files += 1
            info.bytes += len(sub)
    for s in range(spec.codex_sessions):
        cwd = spec.folders[s % len(spec.folders)]
        n = rng.randint(*spec.requests)
        start = rng.randint(first_ms, max(first_ms, spec.now_ms - n * 4_000 - 120 * _MINUTE))
        data, requests = _codex_rollout(rng, spec, cwd, start, n)
        rollout = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        folder = codex_root / "sessions" / _iso(start)[:10].replace("-", "/")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"rollout-{_iso(start)[:19].replace(':', '-')}-{rollout}.jsonl").write_bytes(
            data.replace(b"ROLLOUT_ID", rollout.encode())
        )
        info.codex_files += 1
        info.codex_requests += requests
        info.bytes += len(data)
    return info


def _codex_rollout(
    rng: random.Random, spec: AgentLogsSpec, cwd: str, start: int, n: int
) -> tuple[bytes, int]:
    out = bytearray()
    out += _line(
        {
            "timestamp": _iso(start),
            "type": "session_meta",
            "payload": {
                "id": "ROLLOUT_ID",
                "timestamp": _iso(start),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.93.0",
            },
        }
    )
    out += _line(
        {
            "timestamp": _iso(start),
            "type": "event_msg",
            "payload": {"type": "user_message", "message": _prompt(f"{cwd}@{start}")},
        }
    )
    model = rng.choice(CODEX_MODELS)
    out += _line(
        {
            "timestamp": _iso(start),
            "type": "turn_context",
            "payload": {"cwd": cwd, "model": model, "effort": "high"},
        }
    )
    out += _line(
        {
            "timestamp": _iso(start),
            "type": "event_msg",
            "payload": {"type": "token_count", "info": None},
        }
    )
    totals = [0, 0, 0, 0]
    ms = start
    for _ in range(n):
        ms += rng.randint(1_000, max(2_000, min(60_000, (spec.now_ms - start - 3_600_000) // n)))
        inp = rng.randint(2000, 60000)
        last = [inp, rng.randint(0, inp), rng.randint(10, 3000), 0]
        last[3] = rng.randint(0, last[2])
        totals = [a + b for a, b in zip(totals, last, strict=True)]
        out += _line(
            {
                "timestamp": _iso(ms),
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "output": "y" * rng.randint(*spec.tool_output),
                },
            }
        )
        for repeat in range(2):  # Codex writes each token_count twice, equal running totals
            info = {"total_token_usage": _usage(totals), "last_token_usage": _usage(last)}
            out += _line(
                {
                    "timestamp": _iso(ms + repeat * 400),
                    "type": "event_msg",
                    "payload": {"type": "token_count", "info": info},
                }
            )
    return bytes(out), n


def _usage(t: list[int]) -> dict[str, int]:
    return {
        "input_tokens": t[0],
        "cached_input_tokens": t[1],
        "output_tokens": t[2],
        "reasoning_output_tokens": t[3],
        "total_tokens": t[0] + t[2],
    }
