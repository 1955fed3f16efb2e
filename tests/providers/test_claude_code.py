"""Claude Code's logs → calls: the rules of docs/other-tools.md on lines in the tool's shapes."""

from __future__ import annotations

import json

import pytest

from codeburn.providers.agents import ClaudeFile, claude_calls, decode_claude
from codeburn.providers.ide import path_project
from tests.agent_fixtures import (
    CWD,
    SESSION,
    assistant,
    jsonl,
    progress,
    summary,
    usage,
    user,
)

T0 = "2026-03-02T10:00:00.000Z"
T1 = "2026-03-02T10:00:01.500Z"
T2 = "2026-03-02T10:05:00.000Z"
M = 1e-6  # USD per token of a rate written per million


def _calls(files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    decoded = []
    for path, data in files.items():
        chunk = decode_claude(data)
        assert chunk.end == len(data)
        decoded.append(ClaudeFile(path, chunk.requests, chunk.summary, chunk.first_prompt))
    return claude_calls(decoded)


def test_streaming_copies_count_once_with_the_largest_output() -> None:
    data = jsonl(
        [
            assistant("msg_1", "req_1", T0, usage(out=5)),
            assistant("msg_1", "req_1", T0, usage(out=320)),
            assistant("msg_1", "req_1", T1, usage(out=40)),
            assistant("msg_2", "req_2", T2, usage(out=7)),
        ]
    )
    calls = _calls({f"-home-dev-shop/{SESSION}.jsonl": data}).calls
    assert sorted(c.output_tokens for c in calls) == [7, 320]
    first = next(c for c in calls if c.output_tokens == 320)
    assert (first.provider, first.session, first.estimated, first.billed) == (
        "claude-code",
        SESSION,
        False,
        False,
    )
    assert first.project == path_project(CWD) == "-home-dev-shop"


def test_a_line_without_request_id_is_its_own_call_and_synthetic_is_none() -> None:
    data = jsonl(
        [
            assistant("msg_1", None, T0, usage(out=11)),
            assistant("msg_1", None, T1, usage(out=12)),
            assistant("msg_s", "req_s", T1, usage(inp=0, out=0, read=0), model="<synthetic>"),
        ]
    )
    calls = _calls({f"p/{SESSION}.jsonl": data}).calls
    assert sorted(c.output_tokens for c in calls) == [11, 12]
    assert all(c.model == "claude-sonnet-4-5-20250929" for c in calls)


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-sonnet-4-20250514", (3, 15, 3.75, 6, 0.30)),
        ("claude-sonnet-4-5-20250929", (3, 15, 3.75, 6, 0.30)),
        ("claude-opus-4-1-20250805", (15, 75, 18.75, 30, 1.50)),
        ("claude-opus-4-5-20251101", (5, 25, 6.25, 10, 0.50)),
        ("claude-opus-4-6", (5, 25, 6.25, 10, 0.50)),
        ("claude-haiku-4-5-20251001", (1, 5, 1.25, 2, 0.10)),
    ],
)
def test_five_minute_and_one_hour_cache_writes_at_their_own_rates(
    model: str, rates: tuple[float, ...]
) -> None:
    tokens = usage(inp=100, out=2000, read=30_000, write_5m=4000, write_1h=9000)
    calls = _calls({f"p/{SESSION}.jsonl": jsonl([assistant("m", "r", T0, tokens, model=model)])})
    (call,) = calls.calls
    assert call.cache_write_tokens == 13_000 and call.priced
    inp, out, w5, w1, read = rates
    expected = (100 * inp + 2000 * out + 4000 * w5 + 9000 * w1 + 30_000 * read) * M
    assert call.cost == pytest.approx(expected, rel=1e-12)


def test_cache_write_without_parts_is_all_five_minute() -> None:
    tokens = usage(write_5m=1000, parts=False, inp=0, out=0, read=0)
    (call,) = _calls({f"p/{SESSION}.jsonl": jsonl([assistant("m", "r", T0, tokens)])}).calls
    assert call.cost == pytest.approx(1000 * 3.75 * M)


def _subagent_lines() -> list[dict[str, object]]:
    return [
        assistant("msg_a1", "req_a1", T1, usage(out=50), sidechain=True),
        assistant("msg_a2", "req_a2", T2, usage(out=60), sidechain=True),
    ]


def test_progress_copies_count_only_when_the_subagent_file_is_absent() -> None:
    sub = _subagent_lines()
    parent = jsonl(
        [
            user("find the bug", T0),
            assistant("msg_p", "req_p", T0, usage(out=30)),
            *(progress("a1b2c3", line) for line in sub),
        ]
    )
    alone = _calls({f"proj/{SESSION}.jsonl": parent}).calls
    assert sorted(c.output_tokens for c in alone) == [30, 50, 60]
    assert {c.session for c in alone} == {SESSION}
    with_file = _calls(
        {
            f"proj/{SESSION}.jsonl": parent,
            f"proj/{SESSION}/subagents/agent-a1b2c3.jsonl": jsonl(sub),
        }
    ).calls
    assert sorted(c.output_tokens for c in with_file) == [30, 50, 60]
    # counted from the sub-agent's own file, in the parent's session
    assert all(not c.key.startswith("claude-code:proj/") for c in with_file)
    assert {c.session for c in with_file} == {SESSION}


def test_subagent_file_beside_the_session_and_in_its_folder_belong_to_the_parent() -> None:
    other = "agent-file-session-id"
    files = {
        f"proj/{SESSION}/subagents/agent-x1.jsonl": jsonl(
            [assistant("m1", "r1", T0, usage(), session=other, sidechain=True)]
        ),
        "proj/agent-x2.jsonl": jsonl([assistant("m2", "r2", T0, usage(), sidechain=True)]),
    }
    assert {c.session for c in _calls(files).calls} == {SESSION}


def test_title_is_the_summary_else_the_first_prompt_cut_short() -> None:
    long_prompt = "please " + "refactor the checkout flow " * 10
    with_summary = jsonl(
        [
            summary("Checkout refactor"),
            user("Caveat: local commands", T0, meta=True),
            user(long_prompt, T0),
            assistant("m", "r", T0, usage()),
        ]
    )
    other = "6e2d9b5f-0000-4000-8000-000000000002"
    without = jsonl(
        [
            user("<command-name>/init</command-name>", T0, session=other, meta=True),
            user(long_prompt, T0, session=other),
            assistant("m2", "r2", T0, usage(), session=other),
        ]
    )
    titles = _calls({f"p/{SESSION}.jsonl": with_summary, f"p/{other}.jsonl": without}).titles
    assert titles[SESSION] == "Checkout refactor"
    assert titles[other].startswith("please refactor the checkout flow")
    assert len(titles[other]) == 80 and titles[other].endswith("…")


def test_a_torn_last_line_waits_and_every_split_reads_the_same() -> None:
    data = jsonl(
        [
            user("go", T0),
            assistant("msg_1", "req_1", T0, usage(out=5)),
            assistant("msg_1", "req_1", T1, usage(out=9)),
            assistant("msg_2", None, T2, usage(out=3, write_1h=70)),
        ]
    )
    whole = decode_claude(data).requests
    for cut in range(1, len(data)):
        first = decode_claude(data[:cut])
        # whole lines only: up to a newline, or a tail that is already one whole object
        assert first.end == cut or first.end == 0 or data[first.end - 1] == ord("\n")
        rest = decode_claude(data[first.end :], first.end)
        assert first.requests + rest.requests == whole


def test_garbage_and_binary_lines_are_counted_never_raised() -> None:
    good = assistant("m", "r", T0, usage(out=8))
    data = (
        b'{"type":"assistant","usage": not json\n'
        + b'\x00\xff\xfe binary with "usage" \x00\n'
        + jsonl([good])
        + b'["usage"]\n'
        + jsonl([assistant("m2", "r2", "not a time", usage())])
    )
    chunk = decode_claude(data)
    assert [r.output_tokens for r in chunk.requests] == [8]
    assert chunk.bad_lines == 4  # not JSON, binary, not an object, an undatable request


def test_a_large_line_still_counts() -> None:
    line = assistant("m", "r", T0, usage(out=77))
    line["message"]["content"] = [{"type": "text", "text": "x" * (8 * 1024 * 1024)}]
    data = json.dumps(line).encode() + b"\n"
    assert [r.output_tokens for r in decode_claude(data).requests] == [77]


def test_a_count_beyond_json_integers_is_garbage_and_counts_zero() -> None:
    huge = 1 << 64  # no real count; a count this size is a damaged line's
    data = jsonl(
        [
            assistant("m1", "r1", T0, usage(inp=huge, out=9)),
            assistant("m2", "r2", T1, usage(out=(1 << 53) - 1, read=huge)),
        ]
    )
    calls = _calls({f"-home-dev-shop/{SESSION}.jsonl": data}).calls
    assert [(c.input_tokens, c.output_tokens, c.cache_read_tokens) for c in calls] == [
        (0, 9, 1000),
        (10, (1 << 53) - 1, 0),
    ]
