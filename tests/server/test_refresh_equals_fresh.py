"""A long-lived service's refreshes answer exactly what a fresh service answers of the same files.

The refresh keeps per-conversation results between reads (providers/parts.py, the
conversation memo, the results cache's encoded rows): after appends, rewrites, deletions and a
conversation moving to another project, its report and status must equal those of a service
that reads everything for the first time. Only today's conversations change, so that sealed
days (which rightly keep their figures) do not enter the comparison.
"""

from __future__ import annotations

import gc
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.config import Budget
from codeburn.providers.localtime import iso_utc, local_midnight_ms, now_ms, today
from codeburn.providers.runtime import thaw_state
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.service.periods import named_period
from codeburn.server.service.usage import UsageService
from tests.usage_fixtures import at, days_ago, isolated_env

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

BUDGET = Budget()


def _early_today(minutes: int) -> int:
    """A time today, well before now (the suite's clocks are an hour or more past midnight)."""
    start = local_midnight_ms(today())
    return start + min(minutes * 60_000, (now_ms() - start) // 3)


def _recent(seconds: int) -> int:
    """A few minutes ago, and today (however soon after midnight the real clock is)."""
    return max(now_ms() - seconds * 1_000, _early_today(20))


def _conversation(writer: ProfileWriter, cid: str, start_ms: int, n: int = 6) -> None:
    for i in range(n):
        user = i % 2 == 0
        writer.bubble(
            cid,
            f"{cid}-b{i}",
            role="user" if user else "assistant",
            text=("question " if user else "answer ") * (5 + 3 * i),
            created_at=iso_utc(start_ms + 1_000 * i),
            model=None if user else "gpt-5",
        )


def _workspace(root: Path, name: str, folder: str, composers: list[str]) -> None:
    shutil.rmtree(root / "User" / "workspaceStorage" / name, ignore_errors=True)
    with ProfileWriter(root) as writer:
        writer.workspace(name, folder=f"file:///home/me/{folder}", composers=composers)


def _profile(root: Path) -> Path:
    with ProfileWriter(root) as writer:
        _conversation(writer, "conv-old", at(days_ago(2), 10))
        _conversation(writer, "conv-a", _early_today(5))
        _conversation(writer, "conv-b", _early_today(10))
        _conversation(writer, "conv-r", _recent(120))
        db = writer.db_path
    _workspace(root, "w1", "alpha", ["conv-old", "conv-a"])
    _workspace(root, "w2", "beta", ["conv-b", "conv-r"])
    return db


def _sql(db: Path, statement: str, *args: Any) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute(statement, args)
        conn.commit()
    finally:
        conn.close()


def _append(db: Path) -> None:
    with ProfileWriter(db.parent.parent.parent) as writer:
        _conversation(writer, "conv-new", _recent(60), n=8)


def _rewrite_in_place(db: Path) -> None:
    """The recent conversation's answer streamed on: the same ROWID, a longer text."""
    _sql(
        db,
        "UPDATE cursorDiskKV SET value = json_set(value, '$.text', ?) WHERE key = ?",
        "a finished answer " * 90,
        "bubbleId:conv-r:conv-r-b1",
    )


def _rewrite_replacing(db: Path) -> None:
    """An older conversation's bubble written again with INSERT OR REPLACE: a new ROWID."""
    with ProfileWriter(db.parent.parent.parent) as writer:
        writer.bubble(
            "conv-a",
            "conv-a-b3",
            role="assistant",
            text="a rewritten answer " * 40,
            created_at=iso_utc(_early_today(5) + 3_000),
            model="claude-4.6-sonnet",
        )


def _delete_bubble(db: Path) -> None:
    _sql(db, "DELETE FROM cursorDiskKV WHERE key = ?", "bubbleId:conv-b:conv-b-b3")


def _delete_conversation(db: Path) -> None:
    _sql(
        db,
        "DELETE FROM cursorDiskKV WHERE key >= ? AND key < ?",
        "bubbleId:conv-a:",
        "bubbleId:conv-a;",
    )


def _move_project(db: Path) -> None:
    """conv-b moves from beta to a new project's workspace."""
    root = db.parent.parent.parent
    _workspace(root, "w2", "beta", ["conv-r"])
    _workspace(root, "w3", "gamma", ["conv-b"])


MUTATIONS: dict[str, Callable[[Path], None]] = {
    "append": _append,
    "rewrite-in-place": _rewrite_in_place,
    "rewrite-replacing": _rewrite_replacing,
    "delete-bubble": _delete_bubble,
    "delete-conversation": _delete_conversation,
    "project-change": _move_project,
}


def _rounded(value: Any) -> Any:
    """Sums of costs in another order differ in their last bits (a refreshed reader keeps its
    conversations in the order it first met them, a cold one in scan order)."""
    if isinstance(value, float):
        return round(value, 12)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _timeless(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    if answer is None:
        return None
    return _rounded({k: v for k, v in answer.items() if k != "generatedAt"})


def _answers(service: UsageService) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    report = service.report(named_period("all", today()), sync=False)
    return _timeless(report), _timeless(service.status(budget=BUDGET, sync=False))


def _fresh(db: Path, cache: Path) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    return _answers(UsageService(db, cache_dir=cache))


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "home"))
    return _profile(tmp_path / "Cursor")


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_a_refresh_answers_what_a_fresh_service_answers(
    db: Path, tmp_path: Path, name: str
) -> None:
    live = UsageService(db, cache_dir=tmp_path / "live")
    before = _answers(live)
    assert before == _fresh(db, tmp_path / "fresh-0")
    MUTATIONS[name](db)
    after = _answers(live)
    assert after == _fresh(db, tmp_path / "fresh-1")
    assert after != before  # the change shows


def test_every_change_in_turn_keeps_the_refreshes_equal(db: Path, tmp_path: Path) -> None:
    live = UsageService(db, cache_dir=tmp_path / "live")
    _answers(live)
    for n, mutate in enumerate(MUTATIONS.values()):
        mutate(db)
        assert _answers(live) == _fresh(db, tmp_path / f"fresh-{n}")


def test_a_refresh_keeps_the_conversations_that_did_not_change(db: Path, tmp_path: Path) -> None:
    """An append makes its own conversation; every other stays the very same object (so the
    caches and encodings after the read skip them)."""
    live = UsageService(db, cache_dir=tmp_path / "live")
    live.status(budget=BUDGET, sync=False)
    before = dict(live.local.conversations or {})
    _append(db)
    live.status(budget=BUDGET, sync=False)
    after = dict(live.local.conversations or {})
    assert set(after) == {*before, "conv-new"}
    assert all(after[cid] is conv for cid, conv in before.items() if cid != "conv-r")


def test_a_refresh_freezes_what_it_keeps(db: Path, tmp_path: Path) -> None:
    """After a full parse froze the reader's state, a refresh freezes what survived it too:
    the first collection after it would walk every new object to find nothing."""
    live = UsageService(db, cache_dir=tmp_path / "live")
    try:
        live.status(budget=BUDGET, sync=False)
        frozen = gc.get_freeze_count()
        assert frozen > 0
        _append(db)
        live.status(budget=BUDGET, sync=False)
        assert gc.get_freeze_count() > frozen
    finally:
        thaw_state()
