"""What the readers tell attribution about each conversation: recorded turns, titles
(docs/attribution.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codeburn.providers.agent import GraphTurn, graph_turns
from codeburn.providers.agent.graph import Graph
from codeburn.providers.conversations import LocalConversation, local_conversations
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3 import Layout3
from codeburn.providers.localtime import parse_iso_ms
from tests.cursor_fixtures import NOW_MS, ago, by_key, profile, read

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def _ms(text: str) -> int:
    ms = parse_iso_ms(text)
    assert ms is not None
    return ms


def test_bubble_turns_run_from_the_user_message_to_the_last_reply(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("c1", "u1", role="user", text="q" * 8, created_at=ago(30))
        p.bubble("c1", "a1", role="assistant", text="r" * 8, created_at=ago(29.5), model="gpt-5")
        p.bubble("c1", "a2", role="assistant", text="s" * 8, created_at=ago(29))
        p.bubble("c1", "u2", role="user", text="q" * 8, created_at=ago(10))
        p.bubble("c1", "a3", role="assistant", text="t" * 8, created_at=ago(9), model="o3")
        p.composer("c1", extra={"name": "Fix the login"})
    result = read(p.db_path)
    assert result.turns["c1"] == (
        (_ms(ago(30)), _ms(ago(29)), "gpt-5"),
        (_ms(ago(10)), _ms(ago(9)), "o3"),
    )
    assert result.titles == {"c1": "Fix the login"}


def test_a_3x_index_gives_bubble_conversations_the_meta_its_pass_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the Cursor 3.x index the pass parses every composerData row; the bubble
    # conversations' title, meter and dates come from those rows, as read on their own.
    created, updated = NOW_MS - 3_600_000, NOW_MS - 600_000
    with profile(tmp_path) as p:
        p.bubble("c1", "u1", role="user", text="q" * 8, created_at=ago(30))
        p.bubble("c1", "a1", role="assistant", text="r" * 8, created_at=ago(29), model="o3")
        c1 = {"name": "Fix the login", "modelConfig": {"modelName": "o3"}, "lastUpdatedAt": updated}
        p.composer("c1", created_at_ms=created, total_used_tokens=5_000, extra=c1)
        p.bubble("old", "u1", role="user", text="q" * 8)
        p.bubble("old", "a1", role="assistant", text="r" * 80, model="gpt-5")
        p.composer("old", created_at_ms=created, extra={"lastUpdatedAt": updated, "name": "Old"})
        p.bubble("bare", "a1", role="assistant", text="r" * 8, created_at=ago(3))  # no composer
        heads = [{"type": "head", "composerId": c} for c in ("c1", "old", "bare")]
        p.put_item("composer.composerHeaders", {"allComposers": heads})
    asked: list[str] = []
    for name in ("composer_meta", "composer_times"):
        monkeypatch.setattr(scan, name, _recorded(getattr(scan, name), asked))
    result = read(p.db_path)
    assert asked == ["bare"]  # the only one without a composerData row
    assert result.titles == {"c1": "Fix the login", "old": "Old"}
    # ... the same as each conversation's meta read on its own
    monkeypatch.setattr(Layout3, "composer_fields", lambda _self, ids, _places: ({}, ids))
    alone = read(p.db_path)
    assert sorted(asked) == ["bare", "bare", "c1", "old", "old"]
    assert result.calls == alone.calls and result.titles == alone.titles
    assert result.turns == alone.turns


def _recorded(read: Any, asked: list[str]) -> Any:
    def recorded(conn: Any, ids: list[str]) -> Any:
        asked.extend(ids)
        return read(conn, ids)

    return recorded


def test_inferred_dates_make_no_turn(tmp_path: Path) -> None:
    # Builds <= 1.5.5 write no createdAt: the bubbles are dated from the conversation's start
    # and last update (inferred), which never places an exact event inside a turn.
    created, updated = NOW_MS - 3_600_000, NOW_MS - 600_000
    with profile(tmp_path) as p:
        p.bubble("old", "u1", role="user", text="q" * 8)
        p.bubble("old", "a1", role="assistant", text="r" * 80, model="gpt-5")
        p.composer("old", created_at_ms=created, extra={"lastUpdatedAt": updated})
        p.bubble("new", "u1", role="user", text="q" * 8, created_at=ago(5))
        p.bubble("new", "a1", role="assistant", text="r" * 8, created_at=ago(4))
    result = read(p.db_path)
    assert any(c.session == "old" for c in by_key(result).values())  # it is read
    assert "old" not in result.turns and "new" in result.turns


def test_graph_turns_take_recorded_times_only() -> None:
    turns = (
        GraphTurn(1_000, 1, 0, 1, "gpt-5", (), (), end_ms=5_000),
        GraphTurn(None, 1, 0, 1, None, (), ()),  # no time of its own: it would be spread
        GraphTurn(9_000, 1, 0, 1, None, (), (), served="claude-4.6-sonnet"),
    )
    graph = Graph(turns=turns, used_tokens=0, started_ms=None, workspace_uris=(), skipped_blobs=0)
    assert graph_turns(graph) == ((1_000, 5_000, "gpt-5"), (9_000, 9_000, "claude-4.6-sonnet"))


def test_local_conversations_leave_out_stream_only_requests(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("c1", "a1", role="assistant", text="r" * 8, created_at=ago(3), model="gpt-5")
        p.agent("s1", role="user", content="u" * 40, request_id="req-only")
        p.agent("s2", role="assistant", content=[{"type": "text", "text": "a" * 40}])
    result = read(p.db_path)
    assert {c.session for c in result.calls} == {"c1", "req-only"}
    convs = local_conversations(result.calls, result.turns, result.titles)
    assert set(convs) == {"c1"}
    c1 = convs["c1"]
    assert (c1.project, c1.provider, c1.models) == ("cursor", "cursor", ("gpt-5",))
    assert c1.first_ms == c1.last_ms == _ms(ago(3))
    assert LocalConversation.from_row(c1.to_row()) == c1
