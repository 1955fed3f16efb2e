"""What the Claude Code and Codex decoders share: the line scanner and parser
(providers/agents/lines.py) and the log-time reader, each equal to the plain reading (every
line split, `json.loads`, `fromisoformat`)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from codeburn.providers.agents.lines import MarkedLines, parse_object
from codeburn.providers.localtime import _parse_iso_ms, parse_iso_ms

MARKERS = (b'"usage"', b'"user"', b'"summary"')
PIECES = [
    b'"usage"',
    b'"user"',
    b'"summary"',
    b'"use',
    b'r"',
    b"\n",
    b"\r\n",
    b" ",
    b"{}",
    b'{"a": 1}',
    b"\xef\xbb\xbf",
    b"\xed\xa0\x80",
    b"\x00",
    b"[1]",
    b'"x"',
    b"}",
]


def _plain_lines(data: bytes, end: int, markers: tuple[bytes, ...]) -> list[tuple[int, bytes]]:
    found, start = [], 0
    for piece in data[:end].split(b"\n"):
        if any(m in piece for m in markers):
            found.append((start, piece))
        start += len(piece) + 1
    return found


def _plain_parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.integers(0, 3), st.data())
def test_marked_lines_are_the_lines_holding_a_marker(
    pieces: list[bytes], how_many: int, data: st.DataObject
) -> None:
    text = b"".join(pieces)
    end = data.draw(st.integers(0, len(text)))
    markers = MARKERS[:how_many]
    got = list(MarkedLines(text, end, 100, markers))
    assert got == [(100 + at, line) for at, line in _plain_lines(text, end, markers)]


def test_consecutive_and_torn_marked_lines() -> None:
    for text in (b'"usage"\n"usage"\n', b'x\n"user" "usage"\n\n"summary"', b'"usage"', b"\n\n"):
        for end in range(len(text) + 1):
            got = list(MarkedLines(text, end, 7, MARKERS))
            assert got == [(7 + at, line) for at, line in _plain_lines(text, end, MARKERS)]


def test_a_dropped_marker_is_no_longer_looked_for() -> None:
    text = b'a "user"\nb "usage"\nc "user"\nd "usage" "user"\n'
    lines = MarkedLines(text, len(text), 0, (b'"usage"', b'"user"'))
    seen = []
    for at, line in lines:
        seen.append(line[:1])
        if at == 0:
            lines.drop(b'"user"')
    assert seen == [b"a", b"b", b"d"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_a_line_parses_as_json_loads_decides(pieces: list[bytes]) -> None:
    line = b"".join(pieces)
    assert parse_object(line) == _plain_parse(line)


def test_lines_json_loads_accepts_in_other_ways_parse_the_same() -> None:
    for line in (
        b'\xef\xbb\xbf{"a": 1}',  # a byte-order mark
        b'{"a": "\xed\xa0\x80"}',  # an encoded surrogate
        b'  {"a": 1} \r',  # blanks around
        b'{"a": {"b": [1, 2.5, null, true]}}',
        b'{"a": 1} {"b": 2}',  # two objects: not one
        b"[" * 100_000 + b"]" * 100_000,  # too deep
        '{"a": "é"}'.encode("utf-16"),
    ):
        assert parse_object(line) == _plain_parse(line), line[:20]


@settings(max_examples=2000, deadline=None)
@given(
    st.tuples(
        st.integers(0, 9999),
        st.integers(0, 19),
        st.integers(0, 39),
        st.integers(0, 29),
        st.integers(0, 69),
        st.integers(0, 69),
        st.integers(0, 999),
    ),
    st.sampled_from(["Z", "+00:00", "", "Z ", "+05:30"]),
)
def test_a_log_time_reads_as_fromisoformat_reads_it(fields: tuple[int, ...], zone: str) -> None:
    year, month, day, hour, minute, second, ms = fields
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{ms:03d}{zone}"
    assert parse_iso_ms(text) == _parse_iso_ms(text)
    assert parse_iso_ms(text) == parse_iso_ms(text)  # (its day kept: the same the next time)


def test_log_times_at_the_edges() -> None:
    assert parse_iso_ms("1970-01-01T00:00:00.000Z") == 0
    assert parse_iso_ms("2026-11-27T02:05:47.129Z") == 1_795_745_147_129
    assert parse_iso_ms("2100-12-31T23:59:59.999Z") == 4_133_980_799_999
    for bad in ("1969-12-31T23:59:59.999Z", "2101-01-01T00:00:00.000Z", "2026-02-29T10:00:00.000Z"):
        assert parse_iso_ms(bad) is None
    assert parse_iso_ms("2024-02-29T10:00:00.000Z") == _parse_iso_ms("2024-02-29T10:00:00.000Z")
