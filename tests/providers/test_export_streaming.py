"""Reading a usage export as a stream (issue 20, item 12): the file, its rows, their identities."""

from __future__ import annotations

import hashlib
import io
import random
from datetime import date
from pathlib import Path

import pytest

from codeburn.providers.exports.digests import DigestIndex
from codeburn.providers.exports.export_file import ExportFileError, open_export, read_export
from codeburn.providers.exports.team import ChooseUserError, chosen_user, one_persons_rows
from codeburn.providers.exports.usage_csv import CsvFormatError, iter_csv, parse_csv
from tests.csv_fixtures import ExportRow, export_bytes, iso_local

DAY = date(2026, 5, 4)


def test_digest_index_gives_each_key_its_position_as_a_dict_would() -> None:
    rng = random.Random(3)
    index = DigestIndex()
    positions: dict[bytes, int] = {}
    for _ in range(5_000):  # many growths, and keys seen again
        key = hashlib.sha256(str(rng.randrange(3_000)).encode()).digest()[:16]
        new = key not in positions
        expected = positions.setdefault(key, len(positions))
        assert index.get(key) == (None if new else expected)
        assert index.add(key) == (expected, new)
    assert len(index) == len(positions)
    for key, position in positions.items():
        assert index.get(key) == position and index.key(position) == key
    assert index.get(b"\0" * 16) is None
    with pytest.raises(ValueError):
        index.add(b"short")


def test_rows_come_one_at_a_time_and_a_late_broken_row_still_refuses() -> None:
    rows = [ExportRow(iso_local(DAY, 1 + n % 20, n % 60), "gpt-5", input=n) for n in range(50)]
    data = export_bytes([*rows, ExportRow(iso_local(DAY), "gpt-5", input="x")])
    stream = iter_csv(io.BytesIO(data))
    first = next(stream)
    assert (first.input, first.line) == (0, 2)
    with pytest.raises(CsvFormatError, match="line 52"):
        list(stream)


def test_iter_csv_gives_parse_csv_rows_repeats_included() -> None:
    rows = [ExportRow(iso_local(DAY, 9), "auto", input=4)] * 3
    rows.append(ExportRow(iso_local(DAY, 10), "gpt-5", output=2))
    data = export_bytes(rows)
    streamed = list(iter_csv(io.BytesIO(data)))
    assert streamed == parse_csv(data)
    assert len({r.hash for r in streamed}) == 4


def test_not_utf8_is_one_line_from_the_stream() -> None:
    data = export_bytes([ExportRow(iso_local(DAY), "gpt-5")]) + b"\xff\xfe\n"
    with pytest.raises(CsvFormatError, match="not UTF-8"):
        list(iter_csv(io.BytesIO(data)))


def test_open_export_refuses_a_file_that_grows_past_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    path.write_bytes(b"x" * 100)
    with open_export(path, limit=150) as (handle, mtime_ms):
        assert mtime_ms == path.stat().st_mtime_ns // 1_000_000
        with path.open("ab") as grow:
            grow.write(b"y" * 100)
        with pytest.raises(ExportFileError, match="larger than"):
            handle.read()
    with open_export(path, limit=200) as (handle, _):
        assert handle.read() == b"x" * 100 + b"y" * 100
    with pytest.raises(ExportFileError, match="larger than"):
        read_export(path, limit=199)
    assert read_export(path, limit=200)[0] == b"x" * 100 + b"y" * 100


def test_open_export_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    with pytest.raises(ExportFileError, match="not a regular file"), open_export(tmp_path):
        pass
    with pytest.raises(ExportFileError, match="cannot read"), open_export(tmp_path / "none"):
        pass


def test_chosen_user_is_the_rule_of_one_persons_rows() -> None:
    rows = parse_csv(
        export_bytes(
            [
                ExportRow(iso_local(DAY, 9), "gpt-5", input=1, user="a@example.com"),
                ExportRow(iso_local(DAY, 10), "gpt-5", input=2, user="B@example.com"),
            ],
            "team",
        )
    )
    users = ["a@example.com", "B@example.com"]
    assert chosen_user(users, user="b@EXAMPLE.com") == "b@example.com"
    assert [r.input for r in one_persons_rows(rows, user="b@EXAMPLE.com")] == [2]
    assert chosen_user(users, signed_in="A@example.com") == "a@example.com"
    assert chosen_user(["You"], signed_in="a@example.com") is None
    assert chosen_user([], user="a@example.com") is None
    for kwargs in ({}, {"user": "c@example.com"}, {"signed_in": "c@example.com"}):
        with pytest.raises(ChooseUserError):
            chosen_user(users, **kwargs)
