"""Names repeated across thousands of rows are held once (a parse's memory, issue 19): the
model and code-block languages of kept bubbles, the model, tools and commands of agent
requests. Each decoded row brings its own string object; what a reader keeps shares one."""

from __future__ import annotations

import json
import pickle

import pytest

from codeburn.providers.agent import StreamRequest, StreamWalker
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.emit import Bubble
from codeburn.providers.ide.rows import BubbleScan


def fresh(text: str) -> str:
    """An equal string that is another object (as each row's decoded value is)."""
    return "".join(list(text))


def bubble_row(n: int) -> tuple[object, ...]:
    key = f"{scan.CALL_KEY_PREFIX}{scan.BUBBLE_LO}conv-a:b{n}"
    created = "2026-11-02T10:00:00.000Z"
    langs = fresh('["python","ts"]')
    return (n, key, 2, created, 1_793_000_000_000 + n, None, 0, 0, fresh("gpt-5"), b"x", langs)


def test_kept_bubbles_share_their_model_and_language_strings() -> None:
    rows = [bubble_row(n) for n in (3, 2, 1)]
    assert rows[0][8] is not rows[1][8]
    acc = BubbleScan("2026-01-01T00:00:00.000Z", None, None)
    assert acc.add(rows) == (3, 0)
    kept = acc.bubbles["conv-a"]
    assert [b.model for b in kept] == ["gpt-5"] * 3
    assert len({id(b.model) for b in kept}) == 1
    assert len({id(b.languages) for b in kept}) == 1
    assert all(type(b) is Bubble and b.chars == 1 for b in kept)


def test_a_scan_sent_to_another_process_keeps_its_named_bubbles() -> None:
    undated = (9, f"{scan.CALL_KEY_PREFIX}{scan.BUBBLE_LO}conv-b:b9", 1, None, None, None,
               0, 0, None, b"hey", None)  # fmt: skip
    acc = BubbleScan("2026-01-01T00:00:00.000Z", None, None)
    acc.add([bubble_row(n) for n in (3, 2, 1)] + [undated])
    again = pickle.loads(pickle.dumps(acc))
    assert again.bubbles == acc.bubbles and again.pending == acc.pending
    assert again.kept == 3 and again.undated == {"conv-b": 1}
    kept = [*again.bubbles["conv-a"], *again.pending["conv-b"]]
    assert [type(b) for b in kept] == [Bubble] * 4
    assert [(b.rowid, b.chars) for b in kept] == [(3, 1), (2, 1), (1, 1), (9, 3)]


def agent_row(rowid: int, request: str) -> tuple[int, bytes]:
    value = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "done"},
            {"type": "tool-call", "toolName": "Shell", "args": {"command": "npm test"}},
            {"type": "tool-call", "toolName": "Read", "args": {}},
        ],
        "providerOptions": {"cursor": {"requestId": request, "modelName": "gpt-5"}},
    }
    return rowid, json.dumps(value).encode()


def test_agent_requests_share_their_model_tool_and_command_strings() -> None:
    walker = StreamWalker()
    walker.feed([agent_row(1, "r1"), agent_row(2, "r2")])
    first, second = walker.requests["r1"], walker.requests["r2"]
    assert (first.model, first.tools, first.commands) == ("gpt-5", ["Bash", "Read"], ["npm"])
    assert first.model is second.model
    assert all(a is b for a, b in zip(first.tools, second.tools, strict=True))
    assert first.commands[0] is second.commands[0]


def test_a_walker_comes_back_from_a_pickle_equal_with_its_requests_as_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walker = StreamWalker()
    walker.feed([agent_row(1, "r1"), agent_row(2, "r2")])
    walker.pending_user, walker.rows_seen = 7, 9
    data = pickle.dumps(walker, pickle.HIGHEST_PROTOCOL)

    def one_by_one(self: StreamRequest, protocol: int) -> object:
        raise AssertionError("a request pickled on its own")

    # The columns: no request is pickled (nor unpickled) as an object of its own.
    monkeypatch.setattr(StreamRequest, "__reduce_ex__", one_by_one)
    assert pickle.dumps(walker, pickle.HIGHEST_PROTOCOL) == data
    back = pickle.loads(data)
    assert back == walker
    assert list(back.requests) == ["r1", "r2"]
    assert back.requests["r2"].signature() == walker.requests["r2"].signature()
    assert (back.current, back.touched) == (walker.current, walker.touched)
