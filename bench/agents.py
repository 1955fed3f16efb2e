"""Claude Code and Codex logs: our report beside ccusage's, on one generated history.

    python bench/agents.py [--claude-mb 1000] [--codex-mb 200] [--ccusage PATH] [--appends 5]

Writes a Claude Code history (many small sessions plus a few of 100 MB or more at the default
size) and a Codex one with the sample writer, then times, offline with `TZ=UTC`:
ccusage's `claude daily --json` and `codex daily --json` (it reads everything on every run),
our cold `report --provider claude-code` / `codex` (fresh cache), and our report after
appending 10 lines to one session (only the new bytes are read), `--appends` times (one run
of a command moves with the host; the median is the figure). Each tool's row reads only
that tool's logs on both sides (the other tool's root is an empty folder), and it checks that
both count the same tokens. Peak RSS is each of our processes' own (`wait4`; the history is
written by a child, so that this process is small when it starts them). ccusage:
`npm install --prefix /tmp/ccusage ccusage@20.0.24` (the default path).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import Run, codeburn, run_process

from codeburn.providers.localtime import now_ms
from codeburn.providers.samples import AgentLogsSpec, write_agent_logs

CCUSAGE = "/tmp/ccusage/node_modules/.bin/ccusage"


def _report_args(provider: str) -> list[str]:
    """Our report of the last 30 days of one tool, as JSON, without a sync."""
    return ["report", "--format", "json", "--period", "30days", "--no-sync", "--provider", provider]


def _write(claude: Path, codex: Path, claude_mb: int, codex_mb: int) -> int:
    """Many small sessions, a few long ones; returns the bytes written."""
    now, total, seed = now_ms(), 0, 1
    # ~1/4 of the Claude Code bytes in a few large sessions (100 MB or more at 1 GB).
    big = max(1, claude_mb // 400)
    for spec in (
        AgentLogsSpec(
            now,
            days=20,
            claude_sessions=big,
            codex_sessions=0,
            seed=seed,
            requests=(claude_mb * 250 // big, claude_mb * 250 // big + 1),
            tool_output=(200, 3000),
        ),
        AgentLogsSpec(
            now,
            days=20,
            claude_sessions=claude_mb * 4,
            codex_sessions=0,
            seed=seed + 1,
            requests=(5, 80),
            tool_output=(200, 6000),
        ),
        AgentLogsSpec(
            now,
            days=20,
            claude_sessions=0,
            codex_sessions=max(1, codex_mb * 2),  # ~0.5 MB each
            seed=seed + 2,
            requests=(20, 200),
            tool_output=(200, 8000),
        ),
    ):
        total += write_agent_logs(claude, codex, spec).bytes
    return total


def _write_aside(claude: Path, codex: Path, claude_mb: int, codex_mb: int) -> int:
    """`_write` in a child process: this one stays small, and the peak RSS `wait4` gives for a
    process it starts (which counts what it was forked from) is that process's own."""
    context = multiprocessing.get_context("fork")
    written = context.Value("q", 0)

    def work() -> None:
        written.value = _write(claude, codex, claude_mb, codex_mb)

    child = context.Process(target=work)
    child.start()
    child.join()
    if child.exitcode:
        raise RuntimeError(f"writing the history failed ({child.exitcode})")
    return int(written.value)


def _env(claude: Path, codex: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TZ="UTC",
        CLAUDE_CONFIG_DIR=str(claude),
        CODEX_HOME=str(codex),
        CODEBURN_CACHE_DIR=str(cache),
        CODEBURN_CONFIG_DIR=str(cache.parent / "config"),
        CODEBURN_CURSOR_DB=str(cache.parent / "no-cursor" / "state.vscdb"),
        CODEBURN_CURSOR_HOME=str(cache.parent / "no-cursor-home"),
        CODEBURN_CURSOR_SYNC="0",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled modules are cached
    return env


def _tool_env(tool: str, claude: Path, codex: Path, cache: Path) -> dict[str, str]:
    """`_env` with only `tool`'s logs: the other root is an empty folder."""
    empty = cache.parent / "empty"
    empty.mkdir(exist_ok=True)
    if tool == "claude":
        return _env(claude, empty, cache)
    return _env(empty, codex, cache)


def _ccusage(binary: str, tool: str, env: dict[str, str]) -> tuple[Run, dict[str, Any]]:
    run = run_process([binary, tool, "daily", "--json", "--offline", "--timezone", "UTC"], env)
    return run, json.loads(run.stdout)


def _tokens(report: dict[str, Any]) -> int:
    t = report["totals"]
    return int(t["inputTokens"] + t["outputTokens"] + t["cacheReadTokens"] + t["cacheWriteTokens"])


def _append(claude: Path) -> Path:
    """10 lines at the end of the largest session (a request each); returns its path."""
    path = max((claude / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    first = json.loads(path.open("rb").readline())
    lines = []
    for i in range(10):
        lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "sessionId": first.get("sessionId"),
                    "cwd": first.get("cwd"),
                    "timestamp": time.strftime(
                        "%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now_ms() // 1000)
                    ),
                    "requestId": f"req_bench_{i}_{time.time_ns()}",
                    "message": {
                        "id": f"msg_bench_{i}",
                        "model": "claude-sonnet-4-5-20250929",
                        "usage": {
                            "input_tokens": 3,
                            "output_tokens": 50,
                            "cache_read_input_tokens": 1000,
                            "cache_creation_input_tokens": 0,
                        },
                    },
                }
            )
        )
    with path.open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claude-mb", type=int, default=1000)
    parser.add_argument("--codex-mb", type=int, default=200)
    parser.add_argument("--ccusage", default=CCUSAGE)
    parser.add_argument("--appends", type=int, default=5, help="reports after an append each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeburn-agents-") as tmp:
        root = Path(tmp)
        claude, codex = root / "claude", root / "codex"
        written = _write_aside(claude, codex, args.claude_mb, args.codex_mb)
        subprocess.run(
            ["cat", *map(str, claude.rglob("*.jsonl"))], stdout=subprocess.DEVNULL, check=False
        )
        print(
            f"history: {written / 1e6:.0f} MB ({sum(1 for _ in claude.rglob('*.jsonl'))} "
            f"Claude Code files, {sum(1 for _ in codex.rglob('*.jsonl'))} Codex files)"
        )
        rows = []
        for tool, provider in (("claude", "claude-code"), ("codex", "codex")):
            env = _tool_env(tool, claude, codex, root / f"cache-{tool}")
            theirs, their_json = _ccusage(args.ccusage, tool, env)
            report = _report_args(provider)
            cold = codeburn(report, env)
            ours = json.loads(cold.stdout)
            warm = codeburn(report, env)
            their_tokens = int(their_json["totals"]["totalTokens"])
            rows.append((tool, theirs, cold, warm, their_tokens, _tokens(ours)))
        env = _tool_env("claude", claude, codex, root / "cache-claude")
        afters = []
        for _ in range(args.appends):
            _append(claude)
            afters.append(codeburn(_report_args("claude-code"), env))
        theirs_after, _ = _ccusage(args.ccusage, "claude", env)
    print(
        "| tool | ccusage s | ours cold s | cold ÷ ccusage | ours unchanged s "
        "| cold peak RSS MB | tokens equal |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for tool, theirs, cold, warm, their_tokens, our_tokens in rows:
        print(
            f"| {tool} | {theirs.seconds:.2f} | {cold.seconds:.2f} | "
            f"{cold.seconds / theirs.seconds:.1f} | {warm.seconds:.2f} | "
            f"{cold.max_rss_kb / 1024:.0f} | {their_tokens == our_tokens} ({our_tokens:,}) |"
        )
    seconds = [a.seconds for a in afters]
    print(
        f"after appending 10 lines ({len(afters)} times): ours "
        + ", ".join(f"{s:.2f}" for s in seconds)
        + f" s (median {statistics.median(seconds):.2f} s, peak RSS "
        f"{max(a.max_rss_kb for a in afters) / 1024:.0f} MB), ccusage {theirs_after.seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
