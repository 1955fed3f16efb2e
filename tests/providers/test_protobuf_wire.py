"""The schema-less protobuf reader and its encoder."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from codeburn.providers.agent import protobuf as pb


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, "00"), (1, "01"), (150, "9601"), (300, "ac02"), (2**64 - 1, "ffffffffffffffffff01")],
)
def test_varints_as_the_protobuf_docs_encode_them(value: int, encoded: str) -> None:
    assert pb.encode_varint(value).hex() == encoded
    assert pb.read_varint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


def test_fields_of_a_hand_encoded_message() -> None:
    # 08 96 01 = field 1 varint 150; 12 07 "testing" = field 2 bytes; then fixed64 and fixed32.
    raw = bytes.fromhex(
        "".join(["089601", "120774657374696e67", "19", "01" + "00" * 7, "2502000000"])
    )
    assert list(pb.fields(raw)) == [
        (1, pb.VARINT, 150),
        (2, pb.LENGTH, b"testing"),
        (3, pb.FIXED64, 1),
        (4, pb.FIXED32, 2),
    ]
    msg = pb.parse(raw)
    assert pb.first_int(msg, 1) == 150 and pb.first_bytes(msg, 2) == b"testing"
    assert pb.first_bytes(msg, 9) is None and pb.all_bytes(msg, 9) == []


def test_encoder_writes_what_the_reader_reads() -> None:
    raw = pb.message(
        pb.varint_field(26, 1_772_000_000_000),
        pb.bytes_field(8, b"\x01" * 32),
        pb.bytes_field(8, b"\x02" * 32),
        pb.bytes_field(9, "file:///home/me/app"),
        pb.fixed64_field(3, 7),
        pb.fixed32_field(4, 9),
    )
    msg = pb.parse(raw)
    assert msg == {
        26: [1_772_000_000_000],
        8: [b"\x01" * 32, b"\x02" * 32],
        9: [b"file:///home/me/app"],
        3: [7],
        4: [9],
    }


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("0896", "varint"),  # truncated varint
        ("08" + "ff" * 10 + "01", "varint"),  # eleven bytes
        ("08ffffffffffffffffff7f", "64 bits"),  # ten bytes, over 64 bits
        ("1205616263", "past the end"),
        ("0b", "wire type 3"),  # a group
        ("0f", "wire type 7"),
        ("0001", "field number 0"),
        ("19010203", "64-bit"),
        ("250102", "32-bit"),
    ],
)
def test_malformed_input_raises_wire_error_only(raw: str, message: str) -> None:
    with pytest.raises(pb.WireError, match=message):
        pb.parse(bytes.fromhex(raw))


def test_wrong_wire_type_for_a_field_is_malformed() -> None:
    msg = pb.parse(pb.varint_field(1, 5) + pb.bytes_field(2, b"x"))
    with pytest.raises(pb.WireError):
        pb.first_bytes(msg, 1)
    with pytest.raises(pb.WireError):
        pb.first_int(msg, 2)
    with pytest.raises(pb.WireError):
        pb.all_bytes(msg, 1)


def test_nesting_is_bounded() -> None:
    inner = pb.varint_field(1, 1)
    assert pb.nested(inner, pb.MAX_DEPTH) == {1: [1]}
    with pytest.raises(pb.WireError, match="nested deeper"):
        pb.nested(inner, pb.MAX_DEPTH + 1)


_FIELD = st.one_of(
    st.tuples(st.integers(1, 2**29 - 1), st.just(pb.VARINT), st.integers(0, 2**64 - 1)),
    st.tuples(st.integers(1, 2**29 - 1), st.just(pb.LENGTH), st.binary(max_size=40)),
    st.tuples(st.integers(1, 2**29 - 1), st.just(pb.FIXED64), st.integers(0, 2**64 - 1)),
    st.tuples(st.integers(1, 2**29 - 1), st.just(pb.FIXED32), st.integers(0, 2**32 - 1)),
)
_WRITERS = {
    pb.VARINT: pb.varint_field,
    pb.LENGTH: pb.bytes_field,
    pb.FIXED64: pb.fixed64_field,
    pb.FIXED32: pb.fixed32_field,
}


@given(st.lists(_FIELD, max_size=12))
def test_any_encoded_message_reads_back(fields: list[tuple[int, int, int | bytes]]) -> None:
    raw = pb.message(*(_WRITERS[w](n, v) for n, w, v in fields))  # type: ignore[operator]
    assert list(pb.fields(raw)) == fields


@given(st.binary(max_size=200))
def test_arbitrary_bytes_parse_or_raise_wire_error(raw: bytes) -> None:
    try:
        msg = pb.parse(raw)
    except pb.WireError:
        return
    assert all(isinstance(number, int) and number >= 1 for number in msg)


def _by_number(raw: bytes) -> dict[int, list[pb.Value]]:
    """`parse` the long way, field by field (`fields`): the reference for its shortcuts."""
    out: dict[int, list[pb.Value]] = {}
    for number, _wire, value in pb.fields(raw):
        out.setdefault(number, []).append(value)
    return out


# Runs of 32-byte values (blob references, which `parse` reads by stride), broken by fields
# of other numbers and lengths, and cut anywhere: the same dict as field by field, or the same
# error.
_REFS = st.lists(
    st.one_of(
        st.builds(lambda n, refs: b"".join(pb.bytes_field(n, r) for r in refs),
                  st.sampled_from([1, 2, 8, 15, 16, 300]),
                  st.lists(st.binary(min_size=32, max_size=32), max_size=5)),
        st.builds(pb.bytes_field, st.sampled_from([1, 8]), st.binary(min_size=31, max_size=33)),
        st.builds(pb.varint_field, st.sampled_from([1, 8, 14]), st.integers(0, 2**40)),
        st.binary(max_size=3),
    ),
    max_size=8,
)  # fmt: skip


_RUN = [pb.bytes_field(8, bytes([i]) * 32) for i in range(3)]


@example([*_RUN, pb.bytes_field(8, b"x" * 33), *_RUN], 400)  # a longer value in the run
@example([*_RUN, pb.bytes_field(8, b"x" * 31), pb.varint_field(8, 7)], 400)
@example([*_RUN, pb.bytes_field(9, b"x" * 32), *_RUN], 400)  # another field
@example(_RUN, 34 * 2 + 5)  # cut inside the last reference
@given(_REFS, st.integers(0, 400))
def test_runs_of_references_parse_as_field_by_field(parts: list[bytes], cut: int) -> None:
    raw = b"".join(parts)
    for data in (raw, raw[:cut]):
        try:
            expected = _by_number(data)
        except pb.WireError as exc:
            with pytest.raises(pb.WireError, match=str(exc)):
                pb.parse(data)
            continue
        assert pb.parse(data) == expected
