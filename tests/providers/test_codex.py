"""Codex rollouts → calls: the rules of docs/other-tools.md on lines in the tool's shapes."""

from __future__ import annotations

import pytest

from codeburn.providers.agents import CodexState, codex_calls, decode_codex
from tests.agent_fixtures import jsonl, session_meta, token_count, turn_context, user_message

ROLLOUT = "019c16bd-a0fc-7293-855d-2948ce5dc471"
PATH = f"sessions/2026/02/01/rollout-2026-02-01T01-07-32-{ROLLOUT}.jsonl"


def _lines() -> list[dict[str, object]]:
    return [
        session_meta(ROLLOUT, "/home/dev/shop", "2026-02-01T01:07:32.000Z"),
        user_message("add a  checkout\npage", "2026-02-01T01:07:39.000Z"),
        turn_context("gpt-5.2-codex", "2026-02-01T01:07:40.000Z"),
        user_message("and tests", "2026-02-01T01:07:40.500Z"),
        token_count("2026-02-01T01:07:41.000Z", None),
        token_count("2026-02-01T01:07:45.000Z", (10_000, 6_000, 300, 100)),
        token_count("2026-02-01T01:07:45.400Z", (10_000, 6_000, 300, 100)),  # the repeat
        token_count(
            "2026-02-01T01:08:10.000Z", (25_000, 18_000, 700, 300), (15_000, 12_000, 400, 200)
        ),
        token_count(
            "2026-02-01T01:08:10.300Z", (25_000, 18_000, 700, 300), (15_000, 12_000, 400, 200)
        ),
        turn_context("gpt-5.1-codex", "2026-02-01T01:09:00.000Z"),
        token_count("2026-02-01T01:09:30.000Z", (26_000, 18_500, 750, 300), (1_000, 500, 50, 0)),
    ]


def test_deltas_of_running_totals_repeats_skipped_input_without_cached() -> None:
    state = CodexState()
    chunk = decode_codex(jsonl(_lines()), state)
    got = [(u.model, u.input_tokens, u.cache_read_tokens, u.output_tokens) for u in chunk.usages]
    assert got == [
        ("gpt-5.2-codex", 4_000, 6_000, 300),
        ("gpt-5.2-codex", 3_000, 12_000, 400),
        ("gpt-5.1-codex", 500, 500, 50),
    ]
    calls = codex_calls(PATH, state, chunk.usages)
    assert {c.session for c in calls} == {ROLLOUT}
    assert state.title == "add a checkout page"
    assert {c.project for c in calls} == {"-home-dev-shop"}
    assert {c.provider for c in calls} == {"codex"}
    assert calls[0].cost == pytest.approx((4_000 * 1.75 + 6_000 * 0.175 + 300 * 14) / 1e6)
    assert calls[2].cost == pytest.approx((500 * 1.25 + 500 * 0.125 + 50 * 10) / 1e6)


def test_every_split_carries_the_state_and_reads_the_same() -> None:
    data = jsonl(_lines())
    whole = decode_codex(data, CodexState()).usages
    for cut in range(1, len(data), 7):
        state = CodexState()
        first = decode_codex(data[:cut], state)
        rest = decode_codex(data[first.end :], state, first.end)
        assert first.usages + rest.usages == whole


def test_no_model_named_is_a_marked_fallback_and_session_from_the_file_name() -> None:
    data = jsonl([token_count("2026-02-01T01:07:45.000Z", (100, 0, 10, 0))])
    state = CodexState()
    (usage,) = decode_codex(data, state).usages
    assert usage.assumed_model and usage.model == "gpt-5"
    (call,) = codex_calls(PATH, state, [usage])
    assert call.session == ROLLOUT and call.project == "codex"


def test_totals_that_start_again_use_the_events_own_usage() -> None:
    lines = [
        turn_context("gpt-5-codex", "2026-02-01T01:07:40.000Z"),
        token_count("2026-02-01T01:07:45.000Z", (5_000, 1_000, 100, 0)),
        token_count("2026-02-01T01:08:45.000Z", (800, 0, 20, 0), (800, 0, 20, 0)),
    ]
    usages = decode_codex(jsonl(lines), CodexState()).usages
    assert [(u.input_tokens, u.output_tokens) for u in usages] == [(4_000, 100), (800, 20)]


def test_garbage_lines_are_counted_and_a_torn_tail_waits() -> None:
    data = b'{"type":"event_msg","payload":{"type":"token_count" garbage\n' + jsonl(_lines())
    torn = data + b'{"timestamp":"2026-02-01T01:10:00.000Z","type":"event_msg","payload":{"ty'
    chunk = decode_codex(torn, CodexState())
    assert chunk.bad_lines == 1 and chunk.end == len(data) and len(chunk.usages) == 3
