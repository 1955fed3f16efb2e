"""Cursor 3.x global databases: headers, conversationState roots, meters, unreadable ones.

The figures of the mixed database were computed by hand before the reader was written.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from codeburn.providers.agent import protobuf as pb
from codeburn.providers.calls import Call
from codeburn.providers.ide.layout3.metas import ConversationMeta
from codeburn.providers.ide.reader import CursorReader, ReadResult
from codeburn.providers.localtime import iso_utc
from codeburn.providers.plan import Plan
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.graph_writer import TurnSpec, build_graph, json_message
from codeburn.providers.samples.profile_writer import ProfileWriter

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z
MIN, HOUR, DAY = 60_000, 3_600_000, 86_400_000
FLOOR = T0 - 30 * DAY
NOW = T0 + 10 * DAY


def read(db: Path) -> ReadResult:
    return CursorReader(db, floor_ms=FLOOR).read(now_ms=NOW)


def utc_day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def rows(calls: list[Call]) -> list[tuple[object, ...]]:
    return sorted(
        (c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model, c.project, c.session)
        for c in calls
    )


def _root_18(w: Cursor3Writer, composer_id: str = "c-18", **overrides: object) -> None:
    composer: dict[str, object] = {
        "created_ms": T0 + 2 * DAY,
        "updated_ms": T0 + 2 * DAY + 2 * HOUR,
        "model": "composer-2",
    }
    composer.update(overrides)
    tool = {"type": "tool-call", "toolName": "Shell", "args": {"command": "pytest -q"}}
    w.conversation(
        composer_id,
        [
            TurnSpec(user="p" * 40, assistant=["x" * 120], timing_ms=T0 + 2 * DAY + 10 * MIN),
            TurnSpec(user="k" * 12, assistant=["y" * 8]),
        ],
        prompts=[
            json_message("system", "S" * 80),
            json_message("user", "p" * 40, request_id="req-18a"),
            json_message(
                "assistant",
                [{"type": "text", "text": "x" * 120}, tool],
                model="claude-4.5-opus-high-thinking",
            ),
            json_message("tool", "o" * 20),
            json_message("user", "k" * 12, request_id="req-18b"),
            json_message("assistant", "y" * 8),
        ],
        **composer,
    )


def _mixed(tmp_path: Path) -> Path:
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p)
        # _v:3, old layout: bubbles, project from the workspace database.
        p.composer("c-old", created_at_ms=T0, extra={"_v": 3})
        p.bubble("c-old", "u1", role="user", text="u" * 40, created_at=iso_utc(T0))
        p.bubble(
            "c-old", "a1", role="assistant", text="a" * 100, created_at=iso_utc(T0 + MIN),
            model="gpt-5",
        )  # fmt: skip
        p.workspace("ws1", folder="file:///home/me/old", composers=["c-old"])
        # _v:17: bubbles and a root; the bubbles win, the meter credits input once.
        w.header(Header("c-17", workspace_id="ws2", created_ms=T0 + DAY, updated_ms=T0 + DAY))
        p.workspace("ws2", folder="file:///home/me/mixed")
        w.conversation(
            "c-17",
            [TurnSpec(user="q" * 20, assistant=["r" * 60], timing_ms=T0 + DAY)],
            prompts=[json_message("user", "q" * 20, request_id="req-17")],
            version=17,
            created_ms=T0 + DAY,
            context_tokens_used=8_000,
        )
        p.bubble(
            "c-17", "u1", role="user", text="q" * 20, created_at=iso_utc(T0 + DAY),
            request_id="req-17",
        )  # fmt: skip
        p.bubble(
            "c-17", "a1", role="assistant", text="r" * 60, created_at=iso_utc(T0 + DAY + MIN),
            model="claude-4.6-sonnet",
        )  # fmt: skip
        # _v:18, root only.
        w.header(
            Header(
                "c-18", workspace_id="ws3", folder="/home/me/new", created_ms=T0 + 2 * DAY,
                updated_ms=T0 + 2 * DAY + 2 * HOUR,
            )
        )  # fmt: skip
        _root_18(w)
        # Only a transcript exists (read on the agent side): the IDE knows its header.
        w.header(Header("c-tx", folder="/home/me/tx", created_ms=T0 + 3 * DAY))
        # Only a meter; listed in the global ItemTable headers.
        w.item_headers([Header("c-meter", created_ms=T0 + 4 * DAY)])
        w.composer(
            "c-meter", created_ms=T0 + 4 * DAY, state="~", model="default",
            tracked_repo="/home/me/repo", total_used_tokens=12_000,
        )  # fmt: skip
        # An encrypted root, no meter.
        w.header(Header("c-enc", created_ms=T0 + 5 * DAY))
        w.conversation(
            "c-enc", [TurnSpec(user="secret", assistant=["answer"])], encrypt_root=True,
            encrypt_blobs=True, created_ms=T0 + 5 * DAY,
        )  # fmt: skip
        w.composer("empty-state-draft", state="~")
    return p.db_path


def test_mixed_database_gives_the_hand_computed_figures(tmp_path: Path) -> None:
    result = read(_mixed(tmp_path))
    assert rows(result.calls) == [
        # ceil(100/4) = 25 output; the user bubble: ceil(40/4) = 10 input (text source)
        ("cursor:bubble:bubbleId:c-17:a1", T0 + DAY + MIN, 0, 15, "claude-4.6-sonnet",
         "-home-me-mixed", "c-17"),
        ("cursor:bubble:bubbleId:c-old:a1", T0 + MIN, 0, 25, "gpt-5", "-home-me-old", "c-old"),
        ("cursor:bubble:bubbleId:c-old:u1", T0, 10, 0, "gpt-5", "-home-me-old", "c-old"),
        ("cursor:composer-input:c-17", T0 + DAY, 8_000, 0, "claude-4.6-sonnet",
         "-home-me-mixed", "c-17"),
        ("cursor:composer-input:c-meter", T0 + 4 * DAY, 12_000, 0, "cursor-auto",
         "-home-me-repo", "c-meter"),
        # turn 0: ceil((40 + 80 + 20) / 4) = 35 in, ceil(120/4) = 30 out, dated by its timing
        ("cursor:root:c-18:0", T0 + 2 * DAY + 10 * MIN, 35, 30,
         "claude-4.5-opus-high-thinking", "-home-me-new", "c-18"),
        # turn 1: ceil(12/4) = 3 in, ceil(8/4) = 2 out, undated: inferred at lastUpdatedAt
        ("cursor:root:c-18:1", T0 + 2 * DAY + 2 * HOUR, 3, 2, "composer-2", "-home-me-new",
         "c-18"),
    ]  # fmt: skip
    calls = {c.key: c for c in result.calls}
    costs = {
        "cursor:bubble:bubbleId:c-old:u1": 10 * 1.25e-6,
        "cursor:bubble:bubbleId:c-old:a1": 25 * 10e-6,
        "cursor:bubble:bubbleId:c-17:a1": 15 * 15e-6,
        "cursor:composer-input:c-17": 8_000 * 3e-6,
        "cursor:root:c-18:0": 35 * 5e-6 + 30 * 25e-6,
        "cursor:root:c-18:1": 3 * 0.5e-6 + 2 * 2.5e-6,
        "cursor:composer-input:c-meter": 12_000 * 3e-6,
    }
    for key, cost in costs.items():
        assert calls[key].cost == pytest.approx(cost), key
    assert sum(c.cost for c in result.calls) == pytest.approx(0.061419)
    assert sum(c.tokens for c in result.calls) == 10 + 25 + 15 + 8_000 + 65 + 5 + 12_000
    assert calls["cursor:root:c-18:0"].tools == ("Bash",)
    assert calls["cursor:root:c-18:0"].commands == ("pytest",)
    days = sorted({utc_day(c.timestamp_ms) for c in result.calls})
    assert days == ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-24"]
    assert result.conversations == {
        "c-old": "bubbles",
        "c-17": "bubbles",
        "c-18": "root",
        "c-meter": "meter",
        "c-enc": "unreadable",
    }
    assert result.unreadable == {"encrypted": 1}
    assert result.metas["c-tx"] == ConversationMeta("-home-me-tx", None, T0 + 3 * DAY, None, None)
    assert result.metas["c-18"] == ConversationMeta(
        "-home-me-new", "composer-2", T0 + 2 * DAY, T0 + 2 * DAY + 2 * HOUR, None
    )
    assert "empty-state-draft" not in result.metas


def test_blobs_of_a_decoded_root_are_not_stream_only_requests(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        _root_18(Cursor3Writer(p))
        p.agent("loose", role="user", content="z" * 8, request_id="req-loose")
    reader = CursorReader(p.db_path, floor_ms=FLOOR, plan=Plan(walk_rows=0))
    keys = {c.key for c in reader.read(now_ms=NOW).calls}
    assert keys == {"cursor:root:c-18:0", "cursor:root:c-18:1", "cursor:agentKv:req-loose"}


@pytest.mark.parametrize("columns", [9, 10])
def test_headers_table_read_by_column_name(tmp_path: Path, columns: int) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p, header_columns=columns)
        w.header(
            Header(
                "c-18", workspace_id="ws3", created_ms=T0 + 2 * DAY,
                updated_ms=T0 + 2 * DAY + 2 * HOUR, subagent_type="explore",
            )
        )  # fmt: skip
        p.workspace("ws3", folder="file:///home/me/by%20id")
        # composerData without dates or workspace: the header row supplies them.
        _root_18(w, created_ms=None, updated_ms=None)
    result = read(p.db_path)
    assert result.metas["c-18"] == ConversationMeta(
        "-home-me-by id", "composer-2", T0 + 2 * DAY, T0 + 2 * DAY + 2 * HOUR, None
    )
    assert rows(result.calls)[1][1:] == (
        T0 + 2 * DAY + 2 * HOUR, 3, 2, "composer-2", "-home-me-by id", "c-18",
    )  # fmt: skip


def test_no_header_time_and_no_turn_time_is_never_dated_by_the_file(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        Cursor3Writer(p).conversation("c-u", [TurnSpec(user="n" * 8, assistant=["m" * 8])])
    result = read(p.db_path)
    assert result.calls == []
    assert result.conversations == {"c-u": "unreadable"}
    assert result.unreadable == {"undated": 1}


def test_undated_turns_spread_between_header_times(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p)
        w.header(Header("c-s", created_ms=T0, updated_ms=T0 + 4 * HOUR))
        w.conversation("c-s", [TurnSpec(user="n" * 8, assistant=["m" * 8]) for _ in range(3)])
    result = read(p.db_path)
    assert [c.timestamp_ms for c in sorted(result.calls, key=lambda c: c.key)] == [
        T0, T0 + 2 * HOUR, T0 + 4 * HOUR,
    ]  # fmt: skip
    assert {(c.input_tokens, c.output_tokens, c.model, c.project) for c in result.calls} == {
        (2, 2, "cursor-auto", "cursor")
    }


def test_subagent_counts_once_under_its_parents_project(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p)
        w.header(Header("parent", folder="/home/me/app", created_ms=T0))
        w.header(Header("child", parent_id="parent", created_ms=T0 + HOUR))
        w.conversation("parent", [TurnSpec(user="a" * 4, assistant=["b" * 4], timing_ms=T0)])
        w.conversation("child", [TurnSpec(user="c" * 4, assistant=["d" * 4], timing_ms=T0 + HOUR)])
    result = read(p.db_path)
    assert rows(result.calls) == [
        ("cursor:root:child:0", T0 + HOUR, 1, 1, "cursor-auto", "-home-me-app", "child"),
        ("cursor:root:parent:0", T0, 1, 1, "cursor-auto", "-home-me-app", "parent"),
    ]
    assert result.metas["child"].parent_id == "parent"


@pytest.mark.parametrize(
    ("composer", "reason"),
    [
        ({"state": "~not base64!"}, "undecodable"),
        ({"state": "~" + "QUJD"}, "undecodable"),  # base64 of "ABC": not a protobuf root
        ({"version": 19, "state": '{"inline":true}'}, "unknown-version"),
        ({"state": "~AAEC", "encryption_key": "a2V5"}, "encrypted"),
    ],
)
def test_unreadable_conversations_are_counted_by_reason(
    tmp_path: Path, composer: dict[str, object], reason: str
) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        Cursor3Writer(p).composer("c-x", created_ms=T0, **composer)  # type: ignore[arg-type]
    result = read(p.db_path)
    assert result.calls == []
    assert result.conversations == {"c-x": "unreadable"}
    assert result.unreadable == {reason: 1}


def test_unreadable_root_with_a_meter_falls_back_to_the_meter(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        Cursor3Writer(p).composer(
            "c-x", created_ms=T0, state="~QUJD", context_tokens_used=2_000, model="gpt-5"
        )
    result = read(p.db_path)
    assert rows(result.calls) == [
        ("cursor:composer-input:c-x", T0, 2_000, 0, "gpt-5", "cursor", "c-x")
    ]
    assert result.conversations == {"c-x": "meter"} and result.unreadable == {}


def test_old_layout_composer_without_bubbles_stays_silent(tmp_path: Path) -> None:
    # Before Cursor 3 a composerData meter without bubbles produced nothing: still nothing.
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.composer("c-10", created_at_ms=T0, total_used_tokens=5_000)
    result = read(p.db_path)
    assert result.calls == [] and result.conversations == {} and result.unreadable == {}


def test_refresh_picks_up_a_new_root_conversation(tmp_path: Path) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    p.bubble("c-old", "u1", role="user", text="u" * 40, created_at=iso_utc(T0))
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    first = reader.read(now_ms=NOW)
    assert [c.key for c in first.calls] == ["cursor:bubble:bubbleId:c-old:u1"]
    _root_18(w)
    p.close()
    second = reader.read(now_ms=NOW)
    assert sorted(c.key for c in second.calls) == [
        "cursor:bubble:bubbleId:c-old:u1", "cursor:root:c-18:0", "cursor:root:c-18:1",
    ]  # fmt: skip
    assert second.conversations == {"c-old": "bubbles", "c-18": "root"}


def test_blobs_of_a_decoded_root_leave_the_stream_walked_aside_too(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        _root_18(Cursor3Writer(p))
        p.agent("loose", role="user", content="z" * 8, request_id="req-loose")
    reader = CursorReader(p.db_path, floor_ms=FLOOR, plan=Plan(walk_rows=0))
    keys = {c.key for c in reader.read(now_ms=NOW).calls}
    assert keys == {"cursor:root:c-18:0", "cursor:root:c-18:1", "cursor:agentKv:req-loose"}


def test_a_root_claiming_walked_blobs_makes_the_refresh_a_full_parse(tmp_path: Path) -> None:
    root, blobs = build_graph(
        [TurnSpec(user="n" * 8, timing_ms=T0 + HOUR)],
        prompts=[json_message("user", "n" * 8, request_id="req-a")],
    )
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    w.blobs(blobs)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR, first_seen={"req-a": T0})
    first = reader.read(now_ms=NOW)
    # Without its root the blob is a stream-only request, dated when it was first seen.
    assert rows(first.calls) == [
        ("cursor:agentKv:req-a", T0, 2, 0, "cursor-auto", "cursor", "req-a")
    ]
    w.composer("c-a", state="~" + base64.b64encode(root).decode())
    p.close()
    second = reader.read(now_ms=NOW)
    assert second.full
    assert rows(second.calls) == [
        ("cursor:root:c-a:0", T0 + HOUR, 2, 0, "cursor-auto", "cursor", "c-a")
    ]


def test_refresh_reads_a_root_again_once_its_missing_blob_arrives(tmp_path: Path) -> None:
    root, blobs = build_graph(
        [
            TurnSpec(user="a" * 8, assistant=["b" * 8], timing_ms=T0),
            TurnSpec(user="c" * 8, assistant=["d" * 16], timing_ms=T0 + HOUR),
        ]
    )
    late = pb.all_bytes(pb.parse(root), 8)[1].hex()
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    w.blobs({k: v for k, v in blobs.items() if k != late})
    w.composer("c-l", state="~" + base64.b64encode(root).decode())
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert rows(reader.read(now_ms=NOW).calls) == [
        ("cursor:root:c-l:0", T0, 2, 2, "cursor-auto", "cursor", "c-l")
    ]
    p.bubble("c-other", "u1", role="user", text="u" * 4, created_at=iso_utc(T0))
    p.flush()
    unchanged = reader.read(now_ms=NOW)
    assert not unchanged.full and "cursor:root:c-l:0" in {c.key for c in unchanged.calls}
    w.blobs({late: blobs[late]})
    p.close()
    second = reader.read(now_ms=NOW)
    assert not second.full
    assert rows(second.calls) == [
        ("cursor:bubble:bubbleId:c-other:u1", T0, 1, 0, "cursor-auto", "cursor", "c-other"),
        ("cursor:root:c-l:0", T0, 2, 2, "cursor-auto", "cursor", "c-l"),
        ("cursor:root:c-l:1", T0 + HOUR, 2, 4, "cursor-auto", "cursor", "c-l"),
    ]


def test_cursor_3_0_database_lists_conversations_in_the_item_table_only(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p, header_columns=None)
        w.item_headers([Header("c-18", workspace_id="ws9", folder="/home/me/new")])
        _root_18(w)
        with pytest.raises(ValueError, match="no composerHeaders table"):
            w.header(Header("c-x"))
    result = read(p.db_path)
    assert [(c.key, c.project) for c in sorted(result.calls, key=lambda c: c.key)] == [
        ("cursor:root:c-18:0", "-home-me-new"),
        ("cursor:root:c-18:1", "-home-me-new"),
    ]


def test_a_root_without_a_conversation_index_is_read(tmp_path: Path) -> None:
    # Real 3.7.36 files: roots at `_v` 16, headers only in the ItemTable; a root that no
    # header lists is read all the same (issue 16 item 7), never silently ignored.
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.put_item("other", {"x": 1})
        w = Cursor3Writer(p, header_columns=None)
        _root_18(w, version=16)
    result = read(p.db_path)
    # Its JSON blobs belong to the decoded root: no agent-stream-only requests.
    assert {c.key for c in result.calls} == {"cursor:root:c-18:0", "cursor:root:c-18:1"}
    assert result.conversations == {"c-18": "root"}


def test_without_an_index_or_a_root_the_database_is_an_older_builds(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.put_item("other", {"x": 1})
        w = Cursor3Writer(p, header_columns=None)
        w.blobs({"b1": json.dumps(json_message("user", "hi", request_id="req-1")).encode()})
        w.composer("c-2x", version=10, state="~")
    result = read(p.db_path)
    # The JSON blob is read as the agent stream of docs/local-data.md, as before Cursor 3.
    assert {c.key for c in result.calls} == {"cursor:agentKv:req-1"}
    assert result.conversations == {} and result.metas == {}


def test_meters_above_10m_tokens_are_skipped_and_counted(tmp_path: Path) -> None:
    """Meter-only and root conversations whose meter is no context size (issue 20, item 5)."""
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p)
        w.composer("c-m", created_ms=T0, state="~", model="gpt-5", total_used_tokens=2**53 - 1)
        w.composer("c-ok", created_ms=T0, state="~", model="gpt-5", context_tokens_used=9_000)
        w.conversation(
            "c-root",
            [TurnSpec(user="q" * 40, assistant=["r" * 80], timing_ms=T0 + HOUR)],
            created_ms=T0,
            used_tokens=10**12,
        )
    result = read(p.db_path)
    assert rows(result.calls) == [
        ("cursor:composer-input:c-ok", T0, 9_000, 0, "gpt-5", "cursor", "c-ok"),
        ("cursor:root:c-root:0", T0 + HOUR, 10, 20, "cursor-auto", "cursor", "c-root"),
    ]
    assert "c-m" not in result.conversations  # nothing to show: said by the count
    assert result.skipped_gauges == 2


def test_which_listed_conversations_have_bubbles_is_asked_in_batches(tmp_path: Path) -> None:
    """Over 500 listed conversations (more than one statement's worth): a conversation is
    one of bubbles only by its own `bubbleId:<id>:` rows, not by an id it prefixes."""
    meters = {i for i in range(1_203) if i % 7 == 3} | {9, 19}  # c-9x, c-19x have bubbles
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p)
        for i in range(1_203):
            cid = f"c-{i}"
            w.header(Header(cid, created_ms=T0 + i * MIN))
            w.composer(cid, created_ms=T0 + i * MIN, total_used_tokens=1_000 + i)
            if i not in meters:
                at = iso_utc(T0 + i * MIN)
                p.bubble(cid, "u", role="user", text="u" * 40, created_at=at)
                p.bubble(cid, "a", role="assistant", text="a" * 80, created_at=at)
    kinds = read(p.db_path).conversations
    assert {cid for cid, kind in kinds.items() if kind == "meter"} == {f"c-{i}" for i in meters}
    assert {kinds[f"c-{i}"] for i in range(1_203) if i not in meters} == {"bubbles"}
