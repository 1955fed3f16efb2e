"""Bubbles of builds <= 1.5.5 and 0.50.x carry no `createdAt` (real files, docs/local-data.md):
dated by
`timingInfo.clientRpcSendTime`, else spread between the conversation's createdAt and
lastUpdatedAt and marked inferred; only a bubble with none of these is skipped. The fixtures
have the shape of those builds' rows (bubbles with real `tokenCount`s, composerData with
`createdAt`/`lastUpdatedAt`), as tests/data/real-cursor/../SOURCES.md describes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeburn.providers.ide.reader import ReadResult
from codeburn.providers.local import local_diagnostics, local_notices
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.lines import unreadable_line
from tests.cursor_fixtures import NOW_MS, profile, read

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = NOW_MS - 3_600_000  # the conversation started an hour before the test
T1 = T0 + 1_800_000  # and was last updated half an hour later


def _old_bubble(
    p: ProfileWriter, composer: str, bubble: str, role: str, tin: int, tout: int,
    rpc: int | None = None,
) -> str:  # fmt: skip
    extra = {"timingInfo": {"clientRpcSendTime": rpc}} if rpc is not None else None
    return p.bubble(
        composer, bubble, role=role, input_tokens=tin, output_tokens=tout, model="gpt-4o",
        extra=extra,
    )  # fmt: skip


def test_undated_bubbles_are_dated_from_rpc_time_or_spread_between_the_conversation_times(
    tmp_path: Path,
) -> None:
    with profile(tmp_path) as p:
        p.composer("old", created_at_ms=T0, extra={"lastUpdatedAt": T1})
        k1 = _old_bubble(p, "old", "b1", "user", 100, 0, rpc=T0 + 60_000)
        k2 = _old_bubble(p, "old", "b2", "assistant", 0, 50)
        k3 = _old_bubble(p, "old", "b3", "user", 200, 0)
        k4 = _old_bubble(p, "old", "b4", "assistant", 0, 70)
        p.composer("timeless")  # no createdAt: its bubble cannot be dated
        _old_bubble(p, "timeless", "b5", "user", 10, 0)
        db = p.db_path
    result = read(db)
    times = {c.key.removeprefix("cursor:bubble:"): c.timestamp_ms for c in result.calls}
    # b1 by its clientRpcSendTime; b2–b4 (ROWID order) spread evenly from T0 to T1.
    assert times == {k1: T0 + 60_000, k2: T0, k3: T0 + 900_000, k4: T1}
    # Source bubbleTokens (docs/local-data.md#input-source): the real counts, as they are.
    assert sum(c.input_tokens for c in result.calls) == 300
    assert sum(c.output_tokens for c in result.calls) == 120
    assert (result.inferred_dates, result.skipped_undated) == (3, 1)


def test_a_spread_date_before_the_floor_is_not_kept(tmp_path: Path) -> None:
    long_ago = NOW_MS - 400 * 86_400_000  # before any 6-month floor
    with profile(tmp_path) as p:
        p.composer("ancient", created_at_ms=long_ago, extra={"lastUpdatedAt": long_ago + 1000})
        _old_bubble(p, "ancient", "b1", "user", 100, 0)
        db = p.db_path
    result = read(db)
    assert (result.calls, result.inferred_dates, result.skipped_undated) == ([], 0, 0)


def _inline(bubble: str, typ: int, text: str, rpc: int | None = None) -> dict[str, object]:
    message: dict[str, object] = {"type": typ, "bubbleId": bubble, "text": text}
    if rpc is not None:
        message["timingInfo"] = {"clientRpcSendTime": rpc}
    return message


def test_inline_conversations_of_0_44_are_read_by_the_same_rules(tmp_path: Path) -> None:
    # Builds 0.44–0.45: the messages inline in composerData.conversation[], no bubble rows.
    with profile(tmp_path) as p:
        conversation = [
            _inline("u1", 1, "x" * 40, rpc=T0 + 1000),
            _inline("a1", 2, "y" * 400),
            _inline("u2", 1, "z" * 8),
        ]
        p.composer(
            "inl", created_at_ms=T0, extra={"lastUpdatedAt": T1, "conversation": conversation}
        )
        p.composer("nodate", extra={"conversation": [_inline("u3", 1, "w" * 40)]})
        db = p.db_path
    result = read(db)
    calls = {c.key: (c.timestamp_ms, c.input_tokens, c.output_tokens) for c in result.calls}
    # Source text (docs/local-data.md#input-source): user text ÷ 4 per message, assistant text
    # ÷ 4; u1 dated by its
    # clientRpcSendTime, a1 and u2 spread from createdAt (T0) to lastUpdatedAt (T1).
    assert calls == {
        "cursor:bubble:bubbleId:inl:u1": (T0 + 1000, 10, 0),
        "cursor:bubble:bubbleId:inl:a1": (T0, 0, 100),
        "cursor:bubble:bubbleId:inl:u2": (T1, 2, 0),
    }
    assert {c.session for c in result.calls} == {"inl"}
    # A composer none of whose messages has a time is unreadable ("no date"), not skipped rows.
    assert result.unreadable == {"no date": 1}
    assert result.conversations == {"inl": "bubbles", "nodate": "unreadable"}
    assert (result.inferred_dates, result.skipped_undated) == (2, 0)


def test_inferred_dates_and_undatable_inline_composers_are_said_in_the_notices() -> None:
    result = ReadResult([], [], 0, 1, False, True, {}, inferred_dates=3)
    assert local_notices(result, {"no date": 1}) == [
        "1 conversation could not be read (1 no date) — sync or import for exact figures",
    ]
    assert local_diagnostics(result) == [  # facts, not warnings
        "skipped 1 Cursor message without a usable date",
        "dated 3 Cursor messages of older builds from their conversation's start and last"
        " update (they carry no time of their own)",
    ]


def test_the_status_line_does_not_call_an_undatable_inline_composer_a_newer_format() -> None:
    line = unreadable_line({"unreadable": {"count": 1, "reasons": {"no date": 1}}})
    assert line == "1 conversation could not be read — sync or import for exact figures"
    newer = unreadable_line({"unreadable": {"count": 2, "reasons": {"no date": 1, "encrypted": 1}}})
    assert newer is not None and "in a newer Cursor format" in newer
