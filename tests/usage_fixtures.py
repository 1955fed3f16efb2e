"""A small hand-computed Cursor profile and an isolated CodeBurn environment for tests."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import pytest

from codeburn.providers.localtime import iso_utc, local_midnight_ms, today
from codeburn.providers.samples.profile_writer import ProfileWriter


@dataclass(frozen=True)
class Env:
    cache: Path
    config: Path


def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    """Own cache and config folders, no sync, no real Cursor path."""
    env = Env(tmp_path / "cache", tmp_path / "config")
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(env.cache))
    monkeypatch.setenv("CODEBURN_CONFIG_DIR", str(env.config))
    monkeypatch.setenv("CODEBURN_CURSOR_SYNC", "0")
    monkeypatch.delenv("CODEBURN_CURSOR_DB", raising=False)
    monkeypatch.delenv("CODEBURN_CURSOR_BASE_URL", raising=False)
    return env


@contextmanager
def local_zone(name: str) -> Iterator[None]:
    """Run in another local time zone, then back to the suite's own (see tests/clock.py)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


def at(day: date, hour: int, minute: int = 0) -> int:
    return local_midnight_ms(day) + (hour * 60 + minute) * 60_000


def days_ago(n: int) -> date:
    return today() - timedelta(days=n)


def write_hand_profile(root: Path, d1: date, d2: date) -> Path:
    """Three conversations whose figures are computed by hand in the tests.

    A (text source, project -home-me-alpha) on d1: user 40 chars → input 10; assistant 200 chars
    gpt-5 → output 50. B (meter 10,000, unmapped) on d2: user → no call; assistant 80 chars
    claude-4.6-sonnet → output 20; meter record input 10,000. C (token counts) on d2:
    unpriced model, input 1,000, output 500.
    """
    with ProfileWriter(root) as p:
        p.bubble("conv-a", "a1", role="user", text="q" * 40, created_at=iso_utc(at(d1, 10)))
        p.bubble(
            "conv-a",
            "a2",
            role="assistant",
            text="r" * 200,
            created_at=iso_utc(at(d1, 10, 1)),
            model="gpt-5",
        )
        p.composer("conv-b", created_at_ms=at(d2, 9), total_used_tokens=10_000)
        p.bubble("conv-b", "b1", role="user", text="hello there", created_at=iso_utc(at(d2, 9)))
        p.bubble(
            "conv-b",
            "b2",
            role="assistant",
            text="s" * 80,
            created_at=iso_utc(at(d2, 9, 1)),
            model="claude-4.6-sonnet",
        )
        p.bubble(
            "conv-c",
            "c1",
            role="assistant",
            text="t",
            created_at=iso_utc(at(d2, 11)),
            model="mystery-model-x",
            input_tokens=1000,
            output_tokens=500,
        )
        p.workspace("w1", folder="file:///home/me/alpha", composers=["conv-a"])
    return p.db_path


def write_profile_with_today(root: Path) -> Path:
    """The hand profile (three and two days ago) plus one assistant message early today."""
    db = write_hand_profile(root, days_ago(3), days_ago(2))
    with ProfileWriter(root) as p:
        p.bubble(
            "conv-t",
            "t1",
            role="assistant",
            text="x" * 400,
            created_at=iso_utc(at(today(), 0, 5)),
            model="gpt-5",
        )
    return db
