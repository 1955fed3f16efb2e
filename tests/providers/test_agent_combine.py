"""One representation per conversation across the IDE, CLI stores and transcripts.

Figures are hand-computed: tokens = ceil(chars / 4); gpt-5 costs $1.25 / $10 per million
input / output tokens, claude-4.6-sonnet and cursor-auto $3 / $15.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from codeburn.providers.agent_side import ide_side
from codeburn.providers.calls import Call
from codeburn.providers.combine import NO_IDE, Combined, IdeSide, combine
from codeburn.providers.home import transcripts as agent_transcripts
from codeburn.providers.home.reader import AgentReader, take_snapshot
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.samples.cursor3_writer import Cursor3Writer
from codeburn.providers.samples.home_writer import (
    AgentHomeWriter,
    TurnSpec,
    assistant,
    turn_ended,
    user,
)
from codeburn.providers.samples.profile_writer import ProfileWriter

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_780_000_000_000  # 2026-05-28T20:26:40Z
HOUR = 3_600_000


@dataclass(frozen=True)
class Meta:
    project: str | None = None
    model: str | None = None
    created_ms: int | None = None
    updated_ms: int | None = None
    parent_id: str | None = None


def exchange(question: int, answer: int) -> list[dict[str, object]]:
    return [user("q" * question), assistant("a" * answer), turn_ended()]


def read(home: Path, ide: IdeSide = NO_IDE, first_seen: dict[str, int] | None = None) -> Combined:
    agent = AgentReader(home).read(take_snapshot(home))
    return combine(ide, agent, first_seen or {})


def ide_call(key: str, session: str, inp: int, out: int = 0) -> Call:
    return Call(key, "cursor", "cursor-auto", "cursor", session, T0, inp, out)


def summary(calls: list[Call]) -> list[tuple[object, ...]]:
    return [
        (c.key, c.provider, c.model, c.project, c.session, c.timestamp_ms, c.input_tokens,
         c.output_tokens)
        for c in calls
    ]  # fmt: skip


def test_bubbles_win_over_a_transcript_of_the_same_id(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("c1", exchange(40, 80), mtime_ms=T0)
    bubbles = [ide_call("cursor:bubble:bubbleId:c1:b1", "c1", 10, 20)]
    ide = IdeSide(bubbles, {"c1": "bubbles"}, {"c1": Meta(created_ms=T0)}, {})
    combined = read(tmp_path, ide)
    assert combined.calls == bubbles
    assert combined.unreadable == {}


def test_bubble_calls_mark_a_conversation_read_from_bubbles(tmp_path: Path) -> None:
    AgentHomeWriter(tmp_path).transcript("c1", exchange(40, 80), mtime_ms=T0)
    bubbles = [ide_call("cursor:bubble:bubbleId:c1:b1", "c1", 10, 20)]
    assert read(tmp_path, IdeSide(bubbles, {}, {}, {})).calls == bubbles


def test_a_cli_only_session_is_cursor_agent_dated_from_its_meta(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.cli_session(
        "s1",
        [TurnSpec("hi" * 10, ["hello" * 10])],
        created_ms=T0,
        model="gpt-5",
        workspace="/home/me/cli",
    )
    # The CLI also writes a transcript of the same session: the store wins, counted once.
    home.transcript("s1", exchange(400, 800), slug="home-me-cli", flat=True, mtime_ms=T0 + HOUR)
    combined = read(tmp_path)
    assert summary(combined.calls) == [
        ("cursor-agent:s1:0", "cursor-agent", "gpt-5", "-home-me-cli", "s1", T0, 5, 13),
    ]
    assert combined.calls[0].cost == pytest.approx(5 * 1.25e-6 + 13 * 10e-6)


def test_a_transcript_replaces_the_ide_meter_and_spreads_between_header_times(
    tmp_path: Path,
) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("c2", exchange(40, 80) * 3, mtime_ms=T0 + 9 * HOUR)
    meter = ide_call("cursor:composer-input:c2", "c2", 10_000)
    other = ide_call("cursor:bubble:bubbleId:c9:b1", "c9", 7)
    meta = Meta("-home-me-alpha", "claude-4.6-sonnet", T0, T0 + 3 * HOUR)
    ide = IdeSide([meter, other], {"c2": "meter", "c9": "bubbles"}, {"c2": meta}, {})
    combined = read(tmp_path, ide)
    assert summary(combined.calls) == [
        summary([other])[0],
        *(
            (f"cursor:transcript:c2:{i}", "cursor", "claude-4.6-sonnet", "-home-me-alpha", "c2",
             T0 + i * 3 * HOUR // 2, 10, 20)
            for i in range(3)
        ),
    ]  # fmt: skip
    assert sum(c.cost for c in combined.calls[1:]) == pytest.approx(3 * (10 * 3e-6 + 20 * 15e-6))


def test_an_empty_transcript_leaves_the_meter(tmp_path: Path) -> None:
    AgentHomeWriter(tmp_path).transcript("c2", [turn_ended(), turn_ended()], mtime_ms=T0)
    meter = ide_call("cursor:composer-input:c2", "c2", 10_000)
    ide = IdeSide([meter], {"c2": "meter"}, {"c2": Meta(created_ms=T0)}, {})
    assert read(tmp_path, ide).calls == [meter]


def test_unreadable_conversations_are_counted_unless_another_source_reads_them(
    tmp_path: Path,
) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("c3", exchange(4, 4), mtime_ms=T0)  # recovers the IDE's undecodable one
    home.cli_session("s2", [TurnSpec("secret", ["x"])], created_ms=T0, encrypt_blobs=True)
    home.cli_session("s3", [TurnSpec("secret", ["x"])], created_ms=T0, encrypt_blobs=True)
    home.transcript("s3", exchange(8, 8), flat=True, mtime_ms=T0)  # recovers s3
    ide = IdeSide(
        [], {"c3": "unreadable", "c4": "unreadable", "c5": "unreadable"}, {},
        {"c3": "undecodable", "c4": "encrypted", "c5": "encrypted"},
    )  # fmt: skip
    combined = read(tmp_path, ide)
    assert {c.session for c in combined.calls} == {"c3", "s3"}
    # c4 and c5 (IDE) + s2 (CLI) are encrypted; c3's own reason, undecodable, is the one gone.
    assert combined.unreadable == {"encrypted": 3}


def test_a_recovered_conversation_lowers_the_count_of_its_own_reason(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("c6", exchange(4, 4), mtime_ms=T0)
    ide = IdeSide(
        [], {"c5": "unreadable", "c6": "unreadable", "c7": "unreadable"}, {},
        {"c5": "encrypted", "c6": "unknown-version", "c7": "undecodable"},
    )  # fmt: skip
    combined = read(tmp_path, ide)
    assert {c.session for c in combined.calls} == {"c6"}
    assert combined.unreadable == {"encrypted": 1, "undecodable": 1}


def test_a_subagent_counts_once_under_its_parents_project(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("k1", exchange(12, 16), parent_id="c5", mtime_ms=T0 + HOUR)
    home.transcript("k1", exchange(12, 16), slug="somewhere-else", flat=True, mtime_ms=T0)
    parent_meta = Meta("-home-me-beta", "gpt-5", T0, T0 + HOUR)
    ide = IdeSide([], {"c5": "bubbles"}, {"c5": parent_meta}, {})
    combined = read(tmp_path, ide)
    assert summary(combined.calls) == [
        ("cursor:transcript:k1:0", "cursor", "gpt-5", "-home-me-beta", "k1", T0 + HOUR, 3, 4),
    ]


def test_a_flat_subagent_transcript_finds_its_parent_through_the_ide_header(
    tmp_path: Path,
) -> None:
    AgentHomeWriter(tmp_path).transcript("k2", exchange(12, 16), flat=True, mtime_ms=T0)
    metas = {
        "k2": Meta(created_ms=T0 + HOUR, parent_id="c5"),
        "c5": Meta("-home-me-beta", "gpt-5", T0, T0 + HOUR),
    }
    ide = IdeSide([], {"c5": "bubbles", "k2": "meter"}, metas, {})
    assert summary(read(tmp_path, ide).calls) == [
        ("cursor:transcript:k2:0", "cursor", "gpt-5", "-home-me-beta", "k2", T0 + HOUR, 3, 4),
    ]


def test_a_transcript_only_conversation_keeps_first_seen_dates(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("t1", exchange(20, 40), slug="home-me-gamma-app", mtime_ms=T0)
    known = [Call("k", "cursor", "gpt-5", "-home-me-gamma.app", "c0", T0)]
    ide = IdeSide(known, {}, {}, {})
    first = read(tmp_path, ide)
    assert summary(first.calls[1:]) == [
        ("cursor-agent:transcript:t1:0", "cursor-agent", "cursor-auto", "-home-me-gamma.app",
         "t1", T0, 5, 10),
    ]  # fmt: skip
    assert first.first_seen == {"t1:0": T0}
    path = home.transcript("t1", exchange(20, 40) + exchange(4, 8), slug="home-me-gamma-app")
    os.utime(path, ns=((T0 + 30 * HOUR) * 1_000_000,) * 2)
    second = read(tmp_path, ide, first.first_seen)
    assert [(c.key, c.timestamp_ms) for c in second.calls[1:]] == [
        ("cursor-agent:transcript:t1:0", T0),
        ("cursor-agent:transcript:t1:1", T0 + 30 * HOUR),
    ]


def test_a_legacy_txt_and_a_jsonl_of_one_id_count_the_jsonl_only(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("c6", exchange(40, 80), mtime_ms=T0)
    home.legacy_transcript("c6", "user:\n" + "q" * 400 + "\nA:\n" + "a" * 800 + "\n", mtime_ms=T0)
    combined = read(tmp_path)
    assert [(c.key, c.input_tokens, c.output_tokens) for c in combined.calls] == [
        ("cursor-agent:transcript:c6:0", 10, 20),
    ]


def test_without_agent_files_the_ide_answer_passes_through(tmp_path: Path) -> None:
    calls = [ide_call("cursor:composer-input:c7", "c7", 500)]
    ide = IdeSide(calls, {"c7": "meter", "c8": "unreadable"}, {}, {"c8": "encrypted"})
    combined = read(tmp_path / "no-home", ide)
    assert combined.calls == calls
    assert combined.unreadable == {"encrypted": 1}


def test_a_transcript_too_large_to_read_is_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_transcripts, "MAX_TRANSCRIPT_BYTES", 200)
    home = AgentHomeWriter(tmp_path)
    home.transcript("big", exchange(400, 800), mtime_ms=T0)
    home.transcript("big-too", exchange(400, 800), mtime_ms=T0)
    home.transcript("small", exchange(4, 8), mtime_ms=T0)
    meter = ide_call("cursor:composer-input:big-too", "big-too", 900)
    ide = IdeSide([meter], {"big-too": "meter"}, {}, {})
    combined = read(tmp_path, ide)
    # big: nothing else reads it; big-too: the IDE's meter stands for it.
    assert combined.unreadable == {"too-large": 1}
    assert {c.session for c in combined.calls} == {"big-too", "small"}


def test_a_conversation_both_sides_could_not_read_is_counted_once(tmp_path: Path) -> None:
    AgentHomeWriter(tmp_path).cli_session(
        "s9", [TurnSpec("secret", ["x"])], created_ms=T0, encrypt_blobs=True
    )
    ide = IdeSide([], {"s9": "unreadable"}, {}, {"s9": "encrypted"})
    assert read(tmp_path, ide).unreadable == {"encrypted": 1}


def test_real_database_and_transcript_lower_the_recovered_reason(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        c3 = Cursor3Writer(p)
        c3.composer("c-enc", created_ms=T0, state="~AAEC", encryption_key="a2V5")
        c3.composer("c-new", created_ms=T0, version=19, state='{"inline":true}')
        c3.composer("c-bad", created_ms=T0, state="~not base64!")
    result = CursorReader(p.db_path, floor_ms=0).read(now_ms=T0 + HOUR)
    assert result.unreadable_ids == {
        "c-enc": "encrypted",
        "c-new": "unknown-version",
        "c-bad": "undecodable",
    }
    home = tmp_path / "home"
    AgentHomeWriter(home).transcript("c-new", exchange(4, 8), mtime_ms=T0)
    combined = read(home, ide_side(result))
    assert [(c.session, c.input_tokens, c.output_tokens) for c in combined.calls] == [
        ("c-new", 1, 2)
    ]
    assert combined.unreadable == {"encrypted": 1, "undecodable": 1}


def test_turns_dated_from_first_seen_are_the_same_tuple_while_nothing_changed() -> None:
    """A transcript without header times: its turns are dated again only when the turns or
    their first-seen times change (`CallMemo.dated`), so its calls are not built again."""
    from codeburn.providers.agent.graph import GraphTurn  # noqa: PLC0415
    from codeburn.providers.combine import CallMemo  # noqa: PLC0415

    turns = tuple(GraphTurn(None, 10 + i, 0, 20, "gpt-5", (), ()) for i in range(3))
    memo = CallMemo()
    first = memo.dated("conv", turns, (1_000, 2_000, 3_000))
    assert [t.timestamp_ms for t in first] == [1_000, 2_000, 3_000]
    assert [t.user_chars for t in first] == [10, 11, 12]
    memo.done()
    assert memo.dated("conv", turns, (1_000, 2_000, 3_000)) is first
    memo.done()
    moved = memo.dated("conv", turns, (1_000, 2_000, 4_000))
    assert moved is not first and moved[2].timestamp_ms == 4_000
    memo.done()
    memo.done()  # a combination without this conversation forgets it
    assert memo.dated("conv", turns, (1_000, 2_000, 4_000)) is not moved
