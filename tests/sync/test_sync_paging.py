"""Complete JSON syncs (docs/cursor-sync.md, "Paging"): pages are read until cursor.com's count is
reached, and a read that ends before it merges into the store instead of replacing the window."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from codeburn.cache.imports.store import load, store_path
from codeburn.sync import client
from codeburn.sync.cursor_sync import maybe_sync
from codeburn.sync.state import load_state
from codeburn.sync.status_block import cursor_sync_block
from tests.sync.fake_cursor import FIXED_NOW_MS, SyncEnv
from tests.sync.test_sync_json import event

HOUR = 3_600_000
MINUTE = 60_000
NOW = FIXED_NOW_MS
# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = [pytest.mark.usefixtures("fixed_clock"), pytest.mark.any_moment]


def _events(n: int, *, step_ms: int = 10 * MINUTE) -> list[dict[str, Any]]:
    return [event(NOW - (k + 1) * step_ms, conversation=f"conv-{k}") for k in range(n)]


def _stored_conversations() -> list[str]:
    return sorted(e.detail.conversation_id for e in load().events if e.detail is not None)


def test_a_server_capping_its_pages_is_read_to_the_count(sync_env: SyncEnv) -> None:
    sync_env.fake.events = _events(9)
    sync_env.fake.events_cap = 3  # serves 3 a page whatever is asked; the count says 9

    outcome = maybe_sync(sync_env.db_path, force=True, now_ms=NOW)

    assert outcome.summary is not None and outcome.summary["added"] == 9
    assert "incomplete" not in outcome.summary
    requests = sync_env.fake.events_requests()
    assert [r.body["page"] for r in requests] == [1, 2, 3]
    assert {r.body["pageSize"] for r in requests} == {client.EVENTS_PAGE_SIZE}
    assert _stored_conversations() == sorted(f"conv-{k}" for k in range(9))
    assert load_state().incomplete is None
    block = cursor_sync_block(sync_env.db_path, now_ms=NOW)
    assert block is not None and block["state"] == "ok" and "incomplete" not in block


def test_a_count_never_served_merges_and_keeps_working(
    sync_env: SyncEnv, caplog: pytest.LogCaptureFixture
) -> None:
    sync_env.fake.events = _events(9)
    sync_env.fake.events_cap = 3
    sync_env.fake.events_hidden = 5  # counted (14), never served: page 4 is empty

    with caplog.at_level(logging.WARNING, logger="codeburn.sync"):
        outcome = maybe_sync(sync_env.db_path, now_ms=NOW)

    assert outcome.summary is not None and outcome.error_code is None
    assert outcome.summary["incomplete"] == {"served": 9, "count": 14}
    assert outcome.summary["empty"] is False
    assert len(sync_env.fake.events_requests()) == 4
    assert len(_stored_conversations()) == 9
    state = load_state()
    assert (state.failures, state.backoff_until_ms, state.error_code) == (0, None, None)
    assert state.incomplete == (9, 14)
    block = cursor_sync_block(sync_env.db_path, now_ms=NOW)
    assert block is not None and block["state"] == "ok"
    assert block["incomplete"] == {"served": 9, "count": 14}
    assert "served 9 of the 14 usage events" in caplog.text

    # Later the same window serves fewer and changes one: the rest stays, the change is kept.
    served = _events(9)
    served[0]["conversationId"] = "conv-renamed"
    sync_env.fake.events = served[:4]
    sync_env.fake.events_hidden = 10
    again = maybe_sync(sync_env.db_path, force=True, now_ms=NOW + MINUTE)
    assert again.summary is not None and again.summary["incomplete"] == {"served": 4, "count": 14}
    assert _stored_conversations() == sorted(["conv-renamed", *(f"conv-{k}" for k in range(1, 9))])

    # A complete read of the window is the whole truth again: it replaces, and says so.
    sync_env.fake.events, sync_env.fake.events_hidden = served[:4], 0
    complete = maybe_sync(sync_env.db_path, force=True, now_ms=NOW + 2 * MINUTE)
    assert complete.summary is not None and "incomplete" not in complete.summary
    assert len(_stored_conversations()) == 4
    assert load_state().incomplete is None
    block = cursor_sync_block(sync_env.db_path, now_ms=NOW + 2 * MINUTE)
    assert block is not None and "incomplete" not in block


def test_empty_pages_with_a_count_never_delete_what_is_stored(sync_env: SyncEnv) -> None:
    sync_env.fake.events = _events(600, step_ms=MINUTE)
    first = maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    assert first.summary is not None and first.summary["total"] == 600
    assert len(sync_env.fake.events_requests()) == 2  # 500 + 100
    before = store_path().read_bytes()

    sync_env.fake.events, sync_env.fake.events_hidden = [], 600  # the count, never an event
    for n in range(1, 3):  # automatic (past the throttle) and forced: the same answer
        outcome = maybe_sync(
            sync_env.db_path, force=n == 2, now_ms=NOW + n * (HOUR + 5 * MINUTE + 1)
        )
        assert outcome.summary is not None and outcome.error_code is None
        assert outcome.summary["incomplete"] == {"served": 0, "count": 600}
        assert store_path().read_bytes() == before
    state = load_state()
    assert state.failures == 0 and state.backoff_until_ms is None
    # Not recorded as an empty window: the next sync still starts the day before the newest event.
    assert state.through[state.account or ""] == max(e.row.timestamp_ms for e in load().events)


def test_the_page_bound_ends_a_read_as_incomplete(
    sync_env: SyncEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "MAX_EVENT_PAGES", 2)
    monkeypatch.setattr(client, "EVENTS_PAGE_SIZE", 4)
    sync_env.fake.events = _events(8)
    sync_env.fake.events_cap = 3  # 3 a page: two pages bring 6 of 8

    outcome = maybe_sync(sync_env.db_path, force=True, now_ms=NOW)

    assert outcome.summary is not None
    assert outcome.summary["incomplete"] == {"served": 6, "count": 8}
    assert len(sync_env.fake.events_requests()) == 2
    assert len(_stored_conversations()) == 6
