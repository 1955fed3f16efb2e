"""The results cache remembers the file it last read or wrote, and never serves a stale one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeburn.cache.files import write_bytes_atomic
from codeburn.cache.results_cache import (
    CachedResults,
    load_results,
    results_path,
    results_text,
    save_results,
)
from codeburn.providers.calls import Call
from codeburn.providers.conversations import LocalConversation


def _results(marker: str, calls: int = 3) -> CachedResults:
    rows = [
        Call(f"k{marker}{i}", "cursor", "gpt-5", "p", "s", 1_000 + i, 10, 20, cost=0.5)
        for i in range(calls)
    ]
    return CachedResults("/db/a", f"fp-{marker}", 7, rows, [f"note {marker}"])


def test_a_load_after_our_own_save_needs_no_parse(tmp_path: Path) -> None:
    saved = _results("one")
    save_results(tmp_path, saved)
    assert load_results(tmp_path, "/db/a") is saved
    assert load_results(tmp_path, "/db/other") is None


def test_a_file_another_process_wrote_is_read_again(tmp_path: Path) -> None:
    save_results(tmp_path, _results("one"))
    other = _results("two", calls=5)
    write_bytes_atomic(results_path(tmp_path), other.dumps().encode())  # a new file: a new inode
    loaded = load_results(tmp_path, "/db/a")
    assert loaded is not None and loaded is not other
    assert (loaded.fingerprint, loaded.calls, loaded.warnings) == (
        "fp-two",
        other.calls,
        ["note two"],
    )
    assert load_results(tmp_path, "/db/a") is loaded  # and remembered


def test_results_of_another_fingerprint_are_known_by_the_first_line(tmp_path: Path) -> None:
    saved = _results("one", calls=5)
    # Another process's file whose calls could not even be parsed: asked for another
    # fingerprint, it is None from its first line alone.
    stamp = results_text(saved.dump()).split("\n")[0]
    write_bytes_atomic(results_path(tmp_path), f"{stamp}\n{{not json".encode())
    assert load_results(tmp_path, "/db/a", "fp-other") is None
    assert load_results(tmp_path, "/db/a", "fp-one") is None  # (its rest is damaged)
    write_bytes_atomic(results_path(tmp_path), saved.dumps().encode())
    assert load_results(tmp_path, "/db/a", "fp-other") is None
    assert load_results(tmp_path, "/db/other", "fp-one") is None
    loaded = load_results(tmp_path, "/db/a", "fp-one")
    assert loaded is not None and loaded.calls == saved.calls
    assert load_results(tmp_path, "/db/a") is loaded  # any fingerprint: the same


def test_corrupt_missing_and_old_files_are_misses(tmp_path: Path) -> None:
    assert load_results(tmp_path, "/db/a") is None
    results_path(tmp_path).write_text("{not json")
    assert load_results(tmp_path, "/db/a") is None
    old = results_text({**_results("x").dump(), "version": 0})
    write_bytes_atomic(results_path(tmp_path), old.encode())
    assert load_results(tmp_path, "/db/a") is None
    save_results(tmp_path, _results("three"))
    loaded = load_results(tmp_path, "/db/a")
    assert loaded is not None and loaded.fingerprint == "fp-three"


def test_a_save_of_mostly_the_same_calls_writes_every_change(tmp_path: Path) -> None:
    first = _results("one")
    save_results(tmp_path, first)
    # The next refresh: two calls kept as they are, one replaced, one added.
    changed = Call("kone1", "cursor", "gpt-5", "p", "s", 1_001, 10, 99, cost=0.75)
    added = Call("kone3", "cursor-agent", "gpt-5", "q", "t", 1_003, 1, 2, cost=0.25)
    calls = [first.calls[0], changed, first.calls[2], added]
    save_results(tmp_path, CachedResults("/db/a", "fp-two", 7, calls, ["note two"]))
    stamp, rest = results_path(tmp_path).read_text().split("\n")
    raw = {**json.loads(stamp), **json.loads(rest)}
    assert raw["fingerprint"] == "fp-two" and raw["warnings"] == ["note two"]
    assert [Call.from_row(row) for row in raw["calls"]] == calls
    assert [row[7] for row in raw["calls"]] == [20, 99, 20, 2]


def test_a_file_written_once_is_the_text_of_one_written_again(tmp_path: Path) -> None:
    # A command encodes the file whole; a long-lived service item by item, keeping each text.
    first = _results("one", calls=40)
    conversations = {
        f"c{i}": LocalConversation(f"c{i}", "p", "cursor", f"title {i}", ("gpt-5",))
        for i in range(30)
    }
    again = CachedResults("/db/a", "fp", 7, first.calls, ["n"], {"r": 1}, ["d"], conversations)
    once = again.dumps(again=False)
    assert once == again.dumps() == again.dumps()  # (the second from the kept texts)
    assert once == results_text(again.dump())
    save_results(tmp_path, again, again=False)
    assert results_path(tmp_path).read_text() == once


@pytest.mark.parametrize(
    ("place", "value"),
    [
        (0, 7),  # key
        (5, "1001"),  # timestamp
        (7, 2.5),  # output tokens
        (7, True),  # a bool is not a count
        (10, "0.5"),  # cost
        (11, 1),  # estimated
        (14, "cursor:edit"),  # tools
    ],
)
def test_a_call_row_of_the_wrong_types_is_a_miss(tmp_path: Path, place: int, value: object) -> None:
    good = _results("one")
    raw = good.dump()
    assert [Call.from_row(row) for row in raw["calls"]] == good.calls
    raw["calls"][1][place] = value
    with pytest.raises(TypeError):
        Call.from_row(raw["calls"][1])
    write_bytes_atomic(results_path(tmp_path), results_text(raw).encode())
    assert load_results(tmp_path, "/db/a") is None


def test_a_cost_written_as_a_whole_number_loads_as_a_float() -> None:
    row = Call("k", "cursor", "gpt-5", "p", "s", 1, 2, 3, cost=1.0).to_row()
    row[10] = 1  # JSON from another writer: `1`, not `1.0`
    call = Call.from_row(row)
    assert type(call.cost) is float and call.cost == 1.0
