"""Conversation graphs (Cursor 3.x roots + blobs) → turns → calls, with hand-computed figures."""

from __future__ import annotations

import hashlib
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeburn.providers.agent import blob_parts
from codeburn.providers.agent import graph as agent_graph
from codeburn.providers.agent import protobuf as pb
from codeburn.providers.agent.graph import (
    Graph,
    GraphTurn,
    GraphUnreadable,
    decode_root,
)
from codeburn.providers.agent.graph_to_calls import graph_calls, spread_times
from codeburn.providers.localtime import valid_ms
from codeburn.providers.samples.graph_writer import TurnSpec, build_graph, encrypted, json_message

T1 = 1_772_000_000_000  # 2026-02-25T06:13:20Z
T2 = T1 + 3_600_000

TOOL_CALL = {"type": "tool-call", "toolName": "Shell", "args": {"command": "npm test && git st"}}
PROMPTS = [
    json_message("system", "S" * 40),
    json_message("user", [{"type": "text", "text": "u" * 20}], request_id="r1"),
    json_message(
        "assistant",
        [{"type": "text", "text": "a" * 30}, TOOL_CALL],
        model="claude-4.6-sonnet",
    ),
    json_message("tool", "t" * 16),
    json_message("user", "v" * 8, request_id="r2"),
    json_message("assistant", "b" * 10, model="gpt-5"),
]
TURNS = [
    TurnSpec(user="u" * 20, assistant=["a" * 30], timing_ms=T1),
    TurnSpec(user="v" * 8, assistant=["b" * 10], user_ms=T2),
]


def _decode(root: bytes, blobs: dict[str, bytes]) -> Graph:
    return decode_root(root, blobs.get)


def _two_turns(**kw: object) -> tuple[bytes, dict[str, bytes]]:
    return build_graph(TURNS, prompts=PROMPTS, workspace_uris=["file:///home/me/app"], **kw)  # type: ignore[arg-type]


def test_turns_take_texts_from_turn_blobs_and_context_tools_models_from_the_history() -> None:
    root, blobs = _two_turns(started_ms=T1 - 60_000)
    asked: set[str] = set()

    def lookup(key: str) -> bytes | None:
        asked.add(key)
        return blobs.get(key)

    graph = decode_root(root, lookup)
    assert graph.turns == (
        GraphTurn(T1, 20, 40 + 16, 30, "claude-4.6-sonnet", ("Bash",), ("npm", "git")),
        GraphTurn(T2, 8, 0, 10, "gpt-5", (), (), end_ms=T2),  # its user message's time
    )
    assert graph.used_tokens == 0 and graph.skipped_blobs == 0
    assert graph.started_ms == T1 - 60_000
    assert graph.workspace_uris == ("file:///home/me/app",)
    assert asked == set(blobs)  # every stored blob is reached from the root
    assert graph.request_ids == frozenset({"r1", "r2"})


def test_calls_estimate_each_turn_from_chars() -> None:
    root, blobs = _two_turns()
    calls = graph_calls(
        _decode(root, blobs),
        conversation_id="c1",
        provider="cursor",
        project="-home-me-app",
        fallback_model=None,
        created_ms=T1 - 60_000,
        updated_ms=T2,
        key_prefix="cursor:root:",
    )
    assert [(c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model) for c in calls] == [
        # ceil((20 + 56) / 4) = 19, ceil(30 / 4) = 8; ceil(8 / 4) = 2, ceil(10 / 4) = 3
        ("cursor:root:c1:0", T1, 19, 8, "claude-4.6-sonnet"),
        ("cursor:root:c1:1", T2, 2, 3, "gpt-5"),
    ]
    assert calls[0].cost == pytest.approx(19 * 3e-6 + 8 * 15e-6)  # 0.000177
    assert calls[1].cost == pytest.approx(2 * 1.25e-6 + 3 * 10e-6)  # 0.0000325
    assert calls[0].tools == ("Bash",) and calls[0].commands == ("npm", "git")
    assert {(c.provider, c.project, c.session, c.estimated) for c in calls} == {
        ("cursor", "-home-me-app", "c1", True)
    }


def test_meter_credits_input_once_at_the_conversation_start() -> None:
    root, blobs = _two_turns(used_tokens=5_000)
    graph = _decode(root, blobs)
    assert graph.used_tokens == 5_000
    calls = graph_calls(
        graph, conversation_id="c1", provider="cursor", project="p", fallback_model=None,
        created_ms=T1 - 60_000, updated_ms=T2, key_prefix="cursor:root:", meter_tokens=9_999,
    )  # fmt: skip
    assert [(c.key, c.timestamp_ms, c.input_tokens, c.output_tokens) for c in calls] == [
        ("cursor:root:c1:0", T1, 0, 8),
        ("cursor:root:c1:1", T2, 0, 3),
        ("cursor:root:c1:input", T1 - 60_000, 5_000, 0),  # the root's gauge wins over 9,999
    ]
    assert calls[2].model == "claude-4.6-sonnet"
    assert calls[2].cost == pytest.approx(0.015)


def test_composer_meter_is_used_when_the_root_has_none() -> None:
    root, blobs = build_graph([TurnSpec(user="x" * 7, assistant=["y" * 9], timing_ms=T1)])
    calls = graph_calls(
        _decode(root, blobs), conversation_id="c2", provider="cursor", project="p",
        fallback_model="default", created_ms=None, updated_ms=None, key_prefix="k:",
        meter_tokens=1_200,
    )  # fmt: skip
    assert [(c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model) for c in calls] == [
        ("k:c2:0", T1, 0, 3, "cursor-auto"),
        ("k:c2:input", T1, 1_200, 0, "cursor-auto"),  # no created time: the first turn's
    ]


def test_undated_turns_are_spread_between_created_and_updated() -> None:
    turns = [TurnSpec(user="q" * 4, assistant=["r" * 4]) for _ in range(3)]
    root, blobs = build_graph(turns)
    calls = graph_calls(
        _decode(root, blobs), conversation_id="c3", provider="cursor", project="p",
        fallback_model="gpt-5", created_ms=1_000_000, updated_ms=1_600_000, key_prefix="k:",
    )  # fmt: skip
    assert [c.timestamp_ms for c in calls] == [1_000_000, 1_300_000, 1_600_000]
    assert {(c.input_tokens, c.output_tokens, c.model) for c in calls} == {(1, 1, "gpt-5")}


def test_turns_with_no_date_at_all_are_left_out() -> None:
    root, blobs = build_graph([TurnSpec(user="q" * 4, assistant=["r" * 4])])
    calls = graph_calls(
        _decode(root, blobs), conversation_id="c", provider="cursor", project="p",
        fallback_model=None, created_ms=None, updated_ms=0, key_prefix="k:",
    )  # fmt: skip
    assert calls == []


@pytest.mark.parametrize(
    ("known", "lo", "hi", "expected"),
    [
        ([None, 500, None, None, 900], 100, 1000, [100, 500, 633, 766, 900]),
        ([500, None, None], None, 800, [500, 650, 800]),
        ([500, None], None, None, [500, 500]),
        ([None, 500], 900, None, [500, 500]),  # a start after the first known time is ignored
        ([None], None, 5, [5]),
        ([None, None], 7, None, [7, 7]),
        ([None], None, None, [None]),
    ],
)
def test_spread_times(
    known: list[int | None], lo: int | None, hi: int | None, expected: list[int | None]
) -> None:
    assert spread_times(known, lo, hi) == expected


def test_history_only_graph_uses_json_segments_and_their_created_at() -> None:
    prompts = [
        json_message("user", "h" * 12),
        json_message("assistant", "i" * 6, model="gpt-5", created_at="2026-03-02T10:00:00.000Z"),
        json_message("user", "j" * 4),
        json_message("assistant", "k" * 4, created_at=T2),
    ]
    root, blobs = build_graph(prompts=prompts)
    graph = _decode(root, blobs)
    assert graph.turns == (
        GraphTurn(1_772_445_600_000, 12, 0, 6, "gpt-5", (), ()),
        GraphTurn(T2, 4, 0, 4, None, (), ()),
    )


def test_user_text_blob_simulated_messages_and_tool_steps() -> None:
    turns = [
        TurnSpec(user="w" * 12, assistant=["z" * 5], text_in_blob=True, timing_ms=T1, tool_steps=2),
        TurnSpec(user="injected context", simulated=True, timing_ms=T2),
    ]
    root, blobs = build_graph(turns)
    graph = _decode(root, blobs)
    assert graph.turns == (
        GraphTurn(T1, 12, 0, 5, None, (), ()),
        GraphTurn(T2, 0, 16, 0, None, (), ()),
    )


def test_missing_and_encrypted_blobs_are_skipped_and_counted() -> None:
    root, blobs = _two_turns()
    graph = _decode(root, blobs)
    turn_refs = pb.all_bytes(pb.parse(root), 8)
    damaged = dict(blobs)
    del damaged[turn_refs[0].hex()]
    damaged[turn_refs[1].hex()] = encrypted(blobs[turn_refs[1].hex()])
    partial = _decode(root, damaged)
    assert partial.skipped_blobs == 2
    # Both turns survive through the prompt history, with its user and assistant chars.
    assert [(t.user_chars, t.assistant_chars, t.timestamp_ms) for t in partial.turns] == [
        (20, 30, T1),  # dated by the root's turn timing
        (8, 10, None),  # its timestamp was in the encrypted blob
    ]
    assert graph.skipped_blobs == 0


def test_everything_encrypted_is_unreadable_with_the_meter_kept() -> None:
    root, blobs = _two_turns(used_tokens=777)
    locked = {k: encrypted(v) for k, v in blobs.items()}
    with pytest.raises(GraphUnreadable) as info:
        _decode(root, locked)
    assert info.value.reason == "encrypted" and info.value.used_tokens == 777


def test_every_blob_missing_is_unreadable() -> None:
    root, _blobs = _two_turns()
    with pytest.raises(GraphUnreadable) as info:
        decode_root(root, lambda _id: None)
    assert info.value.reason == "missing-blobs"


@pytest.mark.parametrize(
    "root",
    [
        b"\xff\xff\xff",  # not protobuf
        encrypted(b"\x42" * 64),  # an encrypted root
        pb.varint_field(8, 3),  # turns must be blob references
        pb.bytes_field(26, b"x"),  # the start time must be a number
    ],
)
def test_undecodable_roots(root: bytes) -> None:
    with pytest.raises(GraphUnreadable) as info:
        decode_root(root, lambda _id: None)
    assert info.value.reason == "undecodable"


def test_an_empty_root_is_an_empty_conversation() -> None:
    graph = decode_root(b"", lambda _id: None)
    assert graph.turns == () and graph.used_tokens == 0 and graph.skipped_blobs == 0


def test_hex_string_references_resolve_too() -> None:
    user = pb.bytes_field(1, "hello") + pb.varint_field(25, T1)
    user_id = "ab" * 32
    turn = pb.bytes_field(1, pb.bytes_field(1, user_id))
    turn_id = "cd" * 32
    store = {user_id: user, turn_id: turn}
    graph = decode_root(pb.bytes_field(8, turn_id), store.get)
    assert graph.turns == (GraphTurn(T1, 5, 0, 0, None, (), (), end_ms=T1),)


_TEXTS = st.one_of(
    st.text(max_size=40),
    st.just("é" * 5),
    st.just("a\udcff"),
    st.builds(lambda n: "é" * n, st.integers(60, 200)),  # lengths of two varint bytes
)
_FIELDS = st.lists(
    st.one_of(
        st.builds(lambda t: pb.bytes_field(1, t.encode("utf-8", "surrogatepass")), _TEXTS),
        st.builds(lambda v: pb.varint_field(2, v), st.integers(0, 1 << 64 - 1)),
        st.builds(lambda v: pb.varint_field(3, v), st.integers(0, 300)),
        st.builds(lambda b: pb.bytes_field(2, b), st.binary(max_size=8)),
        st.binary(max_size=4),  # anything, malformed too
    ),
    max_size=3,
)


@given(
    inner=_FIELDS,
    outer_extra=st.lists(st.binary(max_size=6), max_size=2),
    cut=st.integers(0, 3),
)
def test_a_plain_step_read_in_place_equals_the_parsed_step(
    inner: list[bytes], outer_extra: list[bytes], cut: int
) -> None:
    data = pb.bytes_field(1, pb.message(*inner)) + b"".join(outer_extra)
    data = data[: len(data) - cut] if cut and len(data) > cut else data
    plain = blob_parts._plain_step(data)
    if plain is not None:  # only the plain shape is read in place; all else goes to the parser
        assert plain == blob_parts._parsed_step(data)


def test_the_common_step_shapes_are_read_in_place() -> None:
    with_time = pb.bytes_field(1, pb.message(pb.bytes_field(1, "héllo"), pb.varint_field(2, T1)))
    bare = pb.bytes_field(1, pb.bytes_field(1, "x" * 300))
    for data, chars, ms in ((with_time, 5, T1), (bare, 300, None)):
        step = blob_parts._plain_step(data)
        assert step is not None and (step.chars, step.timestamp_ms) == (chars, ms)
        assert step == blob_parts._parsed_step(data)
    assert blob_parts._plain_step(pb.bytes_field(2, pb.bytes_field(1, "call"))) is None
    # anything after the timestamp (here a truncated field) is left to the parser
    damaged = pb.bytes_field(1, pb.bytes_field(1, "x") + pb.varint_field(2, T1) + b"\x18")
    assert blob_parts._plain_step(damaged) is None
    assert blob_parts._parsed_step(damaged) == blob_parts.StepPart(
        blob_parts.ASSISTANT_STEP, output=True, failed=True
    )


def test_which_steps_count_as_output_is_one_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    blobs: dict[str, bytes] = {}

    def ref(data: bytes) -> bytes:
        digest = hashlib.sha256(data).digest()
        blobs[digest.hex()] = data
        return digest

    thinking = pb.bytes_field(3, pb.bytes_field(1, "pensé…"))
    steps = [
        ref(thinking),
        ref(pb.bytes_field(1, pb.bytes_field(1, "answer!"))),
        ref(pb.bytes_field(2, pb.bytes_field(1, "call-0"))),
    ]
    user = ref(pb.bytes_field(1, "hello"))
    turn = ref(pb.message(pb.bytes_field(1, user), *(pb.bytes_field(2, s) for s in steps)))
    root = pb.bytes_field(2, turn)
    assert blob_parts._parsed_step(thinking) == blob_parts.StepPart(blob_parts.THINKING_STEP)
    # docs/cursor-3-layout.md: the assistant steps' text only; thinking and tool calls count in
    # no turn.
    assert [t.assistant_chars for t in _decode(root, blobs).turns] == [7]
    # Counting thinking as output is that rule's change alone.
    output = frozenset({blob_parts.ASSISTANT_STEP, blob_parts.THINKING_STEP})
    monkeypatch.setattr(blob_parts, "OUTPUT_STEPS", output)
    graph = _decode(root, blobs)
    assert [t.assistant_chars for t in graph.turns] == [7 + 6]
    assert graph.skipped_blobs == 0


_REFS = st.one_of(st.binary(min_size=32, max_size=32), st.binary(max_size=140))


@given(
    refs=st.lists(st.tuples(st.sampled_from([1, 2]), _REFS), max_size=5),
    inner_extra=st.lists(st.binary(max_size=6), max_size=2),
    outer_extra=st.lists(st.binary(max_size=6), max_size=2),
    cut=st.integers(0, 3),
)
def test_a_plain_turn_read_in_place_equals_the_parsed_turn(
    refs: list[tuple[int, bytes]], inner_extra: list[bytes], outer_extra: list[bytes], cut: int
) -> None:
    agent = pb.message(*(pb.bytes_field(n, ref) for n, ref in refs), *inner_extra)
    data = pb.bytes_field(1, agent) + b"".join(outer_extra)
    data = data[: len(data) - cut] if cut and len(data) > cut else data
    plain = blob_parts._plain_turn(data)
    if plain is not None:  # only the plain shape is read in place; all else goes to the parser
        assert plain == blob_parts._parsed_turn(data)


def test_the_common_turn_shapes_are_read_in_place() -> None:
    user, steps = b"u" * 32, [b"s" * 32, b"t" * 32]
    agent = pb.message(pb.bytes_field(1, user), *(pb.bytes_field(2, s) for s in steps))
    many = pb.message(pb.bytes_field(1, user), *(pb.bytes_field(2, b"s" * 32) for _ in range(9)))
    for data in (pb.bytes_field(1, agent), pb.bytes_field(1, many), pb.bytes_field(1, b"")):
        plain = blob_parts._plain_turn(data)
        assert plain is not None and plain == blob_parts._parsed_turn(data)
    keys = (user.hex(), [s.hex() for s in steps])  # references are read as blob ids
    assert blob_parts._plain_turn(pb.bytes_field(1, agent)) == keys
    assert len(pb.bytes_field(1, many)) > 0x80 + 2  # an outer length of two bytes
    # a field the turn reader does not know (Cursor 3.7 adds 3 and 4): left to the parser
    other = pb.bytes_field(1, agent + pb.bytes_field(3, b"x"))
    assert blob_parts._plain_turn(other) is None
    assert blob_parts._parsed_turn(other) == keys


def test_a_root_meter_above_10m_tokens_gives_way_to_the_next_source() -> None:
    """A graph's used_tokens of 10^12 is no context size (issue 20, item 5): composerData's
    meter applies, and without one each turn's text."""
    root, blobs = _two_turns(used_tokens=10**12)
    graph = _decode(root, blobs)
    how: dict[str, object] = {
        "conversation_id": "c1", "provider": "cursor", "project": "p", "fallback_model": None,
        "created_ms": T1 - 60_000, "updated_ms": T2, "key_prefix": "cursor:root:",
    }  # fmt: skip
    with_meter = graph_calls(graph, meter_tokens=9_999, **how)  # type: ignore[arg-type]
    assert [(c.key, c.input_tokens) for c in with_meter][-1] == ("cursor:root:c1:input", 9_999)
    alone = graph_calls(graph, **how)  # type: ignore[arg-type]
    assert [(c.key, c.input_tokens) for c in alone] == [
        ("cursor:root:c1:0", 19),
        ("cursor:root:c1:1", 2),
    ]


def test_the_turns_walked_ahead_give_the_graph_of_one_walk_prompts_reached_first() -> None:
    root, blobs = _two_turns()
    fields = agent_graph.root_fields(root)
    walked = agent_graph.walk_turns(fields, blob_parts.BytesParts(blobs.get))
    graph = agent_graph.finish_turns(walked)
    assert graph == _decode(root, blobs)
    ids = agent_graph.reached_ids(graph)
    prompts = fields.prompt_keys
    assert ids[: len(prompts)] == prompts  # as one walk reads them: the history first
    assert set(ids) == set(blobs) and len(ids) == len(blobs)


def test_too_many_blobs_found_ahead_is_raised_when_the_graph_is_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, blobs = _two_turns()
    monkeypatch.setattr(agent_graph, "MAX_BLOBS", 3)
    parts = blob_parts.BytesParts(blobs.get)
    walked = agent_graph.walk_turns(agent_graph.root_fields(root), parts)
    with pytest.raises(GraphUnreadable) as raised:
        agent_graph.finish_turns(walked)
    assert raised.value.reason == "too-large"


_USER_FIELDS = st.lists(
    st.one_of(
        st.builds(lambda t: pb.bytes_field(1, t.encode("utf-8", "surrogatepass")), _TEXTS),
        st.builds(lambda v: pb.varint_field(1, v), st.integers(0, 5)),
        st.builds(lambda b: pb.bytes_field(18, b), st.binary(max_size=33)),
        st.builds(lambda v: pb.varint_field(18, v), st.integers(0, 5)),
        st.builds(lambda v: pb.varint_field(5, v), st.integers(0, 2)),
        st.builds(lambda b: pb.bytes_field(5, b), st.binary(max_size=3)),
        st.builds(lambda v: pb.varint_field(25, v), st.integers(0, 1 << 64 - 1)),
        st.builds(lambda b: pb.bytes_field(25, b), st.binary(max_size=3)),
        st.builds(lambda b: pb.bytes_field(2, b), st.binary(max_size=8)),
        st.builds(lambda v: pb.fixed64_field(25, v), st.integers(0, 1 << 64 - 1)),
        st.binary(max_size=4),  # anything, malformed too
    ),
    max_size=6,
)


def _parsed_user_part(data: bytes) -> object:
    """`graph._user_part` through `parse`: the reference it is compared with."""
    try:
        user = pb.nested(data, 3)
    except pb.WireError:
        return blob_parts.BAD
    try:
        text_chars = blob_parts._text_len(pb.first_bytes(user, 1))
        text_ref = pb.first_bytes(user, 18)
        text_key = None if text_ref is None else blob_parts.blob_key(text_ref)
    except pb.WireError:
        return blob_parts.UserPart(failed_early=True)
    try:
        simulated = bool(pb.first_int(user, 5))
    except pb.WireError:
        return blob_parts.UserPart(text_chars=text_chars, text_key=text_key, failed_flag=True)
    try:
        ms = valid_ms(pb.first_int(user, 25))
    except pb.WireError:
        return blob_parts.UserPart(
            text_chars=text_chars, text_key=text_key, simulated=simulated, failed_time=True
        )
    return blob_parts.UserPart(
        text_chars=text_chars, text_key=text_key, simulated=simulated, timestamp_ms=ms
    )


@given(fields=_USER_FIELDS)
def test_a_user_message_read_by_first_values_equals_the_parsed_one(fields: list[bytes]) -> None:
    data = pb.message(*fields)
    assert blob_parts._user_part(data) == _parsed_user_part(data)


@given(fields=_USER_FIELDS)
def test_parse_first_holds_the_first_value_of_each_field_of_parse(fields: list[bytes]) -> None:
    data = pb.message(*fields)
    try:
        parsed = pb.parse(data)
    except pb.WireError:
        with pytest.raises(pb.WireError):
            pb.parse_first(data)
        return
    assert pb.parse_first(data) == {number: values[0] for number, values in parsed.items()}


_TIMING_FIELDS = st.lists(
    st.one_of(
        st.builds(lambda v: pb.varint_field(1, v), st.integers(0, 1 << 64 - 1)),
        st.builds(lambda v: pb.varint_field(2, v), st.integers(0, 1 << 64 - 1)),
        st.builds(lambda b: pb.bytes_field(2, b), st.binary(max_size=3)),
        st.builds(lambda v: pb.varint_field(3, v), st.integers(0, 5)),
        st.builds(lambda v: pb.fixed64_field(2, v), st.integers(0, 1 << 64 - 1)),
        st.just(b"\x80" * 11),  # an overlong varint
        st.binary(max_size=4),  # anything, malformed too
    ),
    max_size=4,
)


def _parsed_timing(raw: bytes) -> int | None:
    """A turn timing's field 2 through `parse_first`: the reference `_timings` is compared with."""
    try:
        ms = pb.parse_first(raw).get(2)
    except pb.WireError:
        return None
    return None if isinstance(ms, bytes) else valid_ms(ms)


@given(timings=st.lists(_TIMING_FIELDS, max_size=4))
def test_the_common_turn_timing_read_in_place_equals_the_parsed_one(
    timings: list[list[bytes]],
) -> None:
    raws = [pb.message(*fields) for fields in timings]
    raws.append(pb.message(pb.varint_field(1, 1000), pb.varint_field(2, 1_795_168_800_000)))
    raws.append(pb.message(pb.varint_field(1, 1000)))
    assert agent_graph._timings(raws) == [_parsed_timing(raw) for raw in raws]


@given(
    st.one_of(st.none(), st.integers(0, 1 << 53)),
    st.integers(0, 1 << 40),
    st.tuples(st.text(max_size=8)),
    st.one_of(st.none(), st.text(max_size=12)),
    st.one_of(st.none(), st.integers(0, 1 << 53)),
)
def test_a_turn_pickles_as_its_fields(
    ts: int | None, chars: int, tools: tuple[str, ...], served: str | None, end: int | None
) -> None:
    """(a forked reader sends its turns back pickled)"""
    turn = GraphTurn(ts, chars, chars + 1, 2, served, tools, tools[:0], served, end)
    back = pickle.loads(pickle.dumps(turn, pickle.HIGHEST_PROTOCOL))
    assert back == turn and type(back) is GraphTurn
    assert [getattr(back, name) for name in GraphTurn.__slots__] == [
        getattr(turn, name) for name in GraphTurn.__slots__
    ]


@given(st.lists(st.one_of(st.binary(min_size=30, max_size=34), st.just(b"ab" * 32)), max_size=6))
def test_a_roots_references_are_read_as_blob_ids_one_by_one(refs: list[bytes]) -> None:
    """However their lengths mix (31 + 33 bytes are 64 too), each reference is its own id."""
    root = pb.message(*(pb.bytes_field(1, r) for r in refs), *(pb.bytes_field(8, r) for r in refs))
    fields = agent_graph.root_fields(root)
    keys = [blob_parts.blob_key(r) for r in refs]
    assert fields.prompt_keys == keys and fields.turn_keys == keys
    assert [k for k in keys if k] == [blob_parts.blob_id(r) for r in refs if blob_parts.blob_id(r)]
