"""Cache files parsed once per version of the file (cache.files.FileMemo)."""

from __future__ import annotations

import os
from pathlib import Path

from codeburn.cache.files import FileMemo


def test_a_file_is_parsed_again_only_when_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    parsed: list[bytes] = []

    def parse(raw: bytes) -> str:
        parsed.append(raw)
        return raw.decode()

    memo: FileMemo[str] = FileMemo()
    assert memo.read(path, parse) is None  # missing: nothing parsed, nothing kept
    path.write_bytes(b"one")
    first = memo.read(path, parse)
    assert first == "one"
    assert memo.read(path, parse) is first
    assert parsed == [b"one"]
    path.write_bytes(b"three")  # another size
    assert memo.read(path, parse) == "three"
    st = path.stat()
    path.write_bytes(b"four!")  # the same size: the mtime tells
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert memo.read(path, parse) == "four!"
    assert parsed == [b"one", b"three", b"four!"]


def test_what_was_just_written_is_read_back_without_parsing(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(b"written")
    memo: FileMemo[object] = FileMemo()
    value = object()
    memo.remember(path, value)
    assert memo.read(path, lambda raw: raw) is value
    memo.remember(tmp_path / "gone.json", value)  # no such file: nothing remembered
    assert memo.read(tmp_path / "gone.json", lambda raw: raw) is None
