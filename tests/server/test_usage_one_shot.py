"""A one-shot service (the CLI) keeps nothing of a read for a refresh, with the same figures.

What a long-lived service keeps for its incremental refresh (the database reader's state, the
agent side's reader and memos) is dropped after each read of a one-shot service, so a
report's peak memory is not that state on top of the report's own work.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers import release_free_memory
from codeburn.providers.background_writes import (
    disable_write_behind,
    enable_write_behind,
    flush_write_behind,
)
from codeburn.providers.localtime import iso_utc, today
from codeburn.providers.plan import LONG_LIVED, ONE_SHOT
from codeburn.providers.samples.home_writer import AgentHomeWriter, assistant, turn_ended, user
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server import service as service_package
from codeburn.server.cli.main import main
from codeburn.server.service import reading
from codeburn.server.service.periods import Period
from codeburn.server.service.usage import UsageService
from tests.usage_fixtures import at, days_ago, isolated_env, write_hand_profile

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


FIGURES = ("totals", "providers", "models", "projects", "days", "conversations", "attribution")


def figures(report: dict[str, Any]) -> dict[str, Any]:
    return {key: report[key] for key in FIGURES}


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolated_env(tmp_path, monkeypatch)
    home = AgentHomeWriter(tmp_path / "dot-cursor")
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(home.home))
    records = [user("q" * 40), assistant("a" * 80), turn_ended()]
    home.transcript("t1", records, mtime_ms=at(days_ago(2), 10))
    return write_hand_profile(tmp_path, days_ago(3), days_ago(2))


def test_a_one_shot_service_keeps_no_reader_state_and_reads_the_same_figures(
    tmp_path: Path, db: Path
) -> None:
    period = Period("custom", days_ago(3), today())
    one_shot = UsageService(db, cache_dir=tmp_path / "one-shot", plan=ONE_SHOT)
    kept = UsageService(db, cache_dir=tmp_path / "kept")
    first = one_shot.report(period, sync=False)
    assert first["totals"]["calls"] > 0
    assert figures(first) == figures(kept.report(period, sync=False))
    local = one_shot._local
    assert (local._reader, local.agent._reader, local.agent._beside) == (None, None, None)
    assert kept._local._reader is not None  # the long-lived service keeps its reader
    with ProfileWriter(db.parents[2]) as writer:  # one more message, today
        writer.bubble(
            "conv-a",
            "a3",
            role="assistant",
            text="u" * 400,
            created_at=iso_utc(at(today(), 0, 5)),
            model="gpt-5",
        )
    # The one-shot service parses from scratch; the long-lived one refreshes: same figures.
    again = one_shot.report(period, sync=False)
    assert again["totals"]["calls"] == first["totals"]["calls"] + 1
    assert figures(again) == figures(kept.report(period, sync=False))
    assert local._reader is None


def test_the_cli_service_is_one_shot(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[bool] = []

    class Recording(UsageService):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(kwargs.get("plan", LONG_LIVED).long_lived)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(service_package, "UsageService", Recording)
    assert main(["report", "--cursor-db", str(db), "--format", "json", "--no-sync"]) == 0
    assert made == [False]


def test_a_long_lived_service_gives_freed_memory_back_after_each_collect(
    tmp_path: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[int] = []
    monkeypatch.setattr(reading, "release_free_memory", lambda: released.append(1) or True)
    period = Period("custom", days_ago(3), today())
    UsageService(db, cache_dir=tmp_path / "kept").report(period, sync=False)
    assert released == [1]
    UsageService(db, cache_dir=tmp_path / "one-shot", plan=ONE_SHOT).report(period, sync=False)
    assert released == [1]  # a one-shot command ends right after: nothing to give back


def test_a_server_gives_memory_back_behind_its_answer(
    tmp_path: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No answer waits for the trim: it runs on the thread that writes the cache files.
    released: list[int] = []
    monkeypatch.setattr(reading, "release_free_memory", lambda: released.append(1) or True)
    enable_write_behind(quiet_s=60.0)
    try:
        period = Period("custom", days_ago(3), today())
        UsageService(db, cache_dir=tmp_path / "kept").report(period, sync=False)
        assert released == []
        assert flush_write_behind()
        assert released == [1]
    finally:
        disable_write_behind()


@pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc_trim"
)
def test_freed_memory_is_given_back_on_glibc() -> None:
    assert release_free_memory() is True
