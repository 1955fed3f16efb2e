"""Exactness: on the shared real Claude Code and Codex logs, our per-day tokens equal ccusage
20.0.24's to the token, and our cost equals its cost (every rate these logs need agrees;
docs/other-tools.md). The golden files and how they were made: tests/data/real-agents/SOURCES.md."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers.agents import (
    ClaudeFile,
    CodexState,
    claude_calls,
    codex_calls,
    decode_claude,
    decode_codex,
)
from codeburn.providers.calls import Call

DATA = Path(__file__).parents[1] / "data" / "real-agents"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the shared logs with the gzipped files as the tools write them (plain)."""
    root = tmp_path_factory.mktemp("real-agents")
    for source in DATA.rglob("*.jsonl*"):
        target = root / source.relative_to(DATA)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.suffix == ".gz":
            target.with_suffix("").write_bytes(gzip.decompress(source.read_bytes()))
        else:
            shutil.copyfile(source, target)
    return root


def _days(calls: list[Call]) -> dict[str, list[float]]:
    days: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0.0])
    for c in calls:
        day = datetime.fromtimestamp(c.timestamp_ms / 1000, UTC).date().isoformat()
        row = days[day]
        row[0] += c.input_tokens
        row[1] += c.output_tokens
        row[2] += c.cache_read_tokens
        row[3] += c.cache_write_tokens
        row[4] += c.cost
    return dict(days)


def _golden(name: str, cost_key: str) -> dict[str, list[float]]:
    daily: list[dict[str, Any]] = json.loads((DATA / name).read_text())["daily"]
    return {
        d["date"]: [
            d["inputTokens"],
            d["outputTokens"],
            d["cacheReadTokens"],
            d["cacheCreationTokens"],
            d[cost_key],
        ]
        for d in daily
    }


def _same(ours: dict[str, list[float]], theirs: dict[str, list[float]]) -> None:
    assert sorted(ours) == sorted(theirs)
    for day, row in theirs.items():
        assert ours[day][:4] == row[:4], day  # tokens: to the token
        assert ours[day][4] == pytest.approx(row[4], rel=1e-9), day


def test_claude_code_days_equal_ccusage(logs: Path) -> None:
    projects = logs / "claude" / "projects"
    files = []
    for path in sorted(projects.rglob("*.jsonl")):
        chunk = decode_claude(path.read_bytes())
        assert chunk.bad_lines == 0
        files.append(
            ClaudeFile(
                path.relative_to(projects).as_posix(),
                chunk.requests,
                chunk.summary,
                chunk.first_prompt,
            )
        )
    _same(_days(claude_calls(files).calls), _golden("ccusage-claude-daily.json", "totalCost"))


def test_codex_days_equal_ccusage(logs: Path) -> None:
    calls: list[Call] = []
    for path in sorted((logs / "codex" / "sessions").rglob("rollout-*.jsonl")):
        state = CodexState()
        chunk = decode_codex(path.read_bytes(), state)
        assert chunk.bad_lines == 0 and not any(u.assumed_model for u in chunk.usages)
        calls += codex_calls(path.as_posix(), state, chunk.usages)
    _same(_days(calls), _golden("ccusage-codex-daily.json", "costUSD"))


def test_calls_since_a_time_are_the_whole_reads_calls_from_then(logs: Path) -> None:
    """What a refresh asks (the days not sealed) equals the full read cut at that time: the
    copies of a request still compete, a session's folder is still where it started."""
    projects = logs / "claude" / "projects"
    files = []
    for path in sorted(projects.rglob("*.jsonl")):
        chunk = decode_claude(path.read_bytes())
        files.append(ClaudeFile(path.relative_to(projects).as_posix(), chunk.requests))
    whole = claude_calls(files).calls
    times = sorted({c.timestamp_ms for c in whole})
    for since in (times[0], times[len(times) // 3], times[len(times) // 2] + 1, times[-1]):
        cut = sorted((c.key, c.project, c.cost) for c in whole if c.timestamp_ms >= since)
        assert sorted((c.key, c.project, c.cost) for c in claude_calls(files, since).calls) == cut
