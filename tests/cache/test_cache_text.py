"""Cache files are written a piece at a time (no second copy of the whole file in memory):
the bytes on disk are still exactly the text's UTF-8, whatever falls on a piece's edge."""

from __future__ import annotations

import json
from pathlib import Path

from codeburn.cache import files
from codeburn.cache.files import read_json, write_cache_json, write_cache_text


def test_a_text_longer_than_a_piece_is_written_whole(tmp_path: Path) -> None:
    step = files._ENCODE_CHUNK
    # a two- and a four-byte character on each side of the first piece's edge
    text = "a" * (step - 1) + "é" + "𝄞" + "b" * (2 * step) + "ü"
    path = tmp_path / "c" / "x.json"
    assert write_cache_text(path, text)
    assert path.read_bytes() == text.encode("utf-8")


def test_json_round_trips_and_empty_text_is_an_empty_file(tmp_path: Path) -> None:
    obj = {"k": ["v" * 1000] * 200, "é": 1}
    path = tmp_path / "y.json"
    assert write_cache_json(path, obj)
    assert read_json(path) == obj
    assert path.read_bytes() == json.dumps(obj, separators=(",", ":")).encode()
    assert write_cache_text(path, "")
    assert path.read_bytes() == b""
