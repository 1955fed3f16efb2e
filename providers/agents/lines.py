"""Complete lines of a JSONL chunk, shared by the Claude Code and Codex decoders.

A tool appends one JSON object per line. A read may catch the last line while it is being
written: that torn tail is not a line yet, and the caller reads it again with the bytes that
follow (docs/other-tools.md). No line is skipped for its size: real lines with large tool
output carry real usage. A tail without its newline that already parses as one JSON
object is complete (a file its writer ended without a newline): an object's proper prefix
never parses, so no later byte can change it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def complete_end(data: bytes) -> int:
    """How many leading bytes of `data` are whole lines (the rest is a torn tail)."""
    cut = data.rfind(b"\n") + 1
    if cut == len(data):
        return cut
    tail = data[cut:]
    # (only a tail ending in `}` can be an object: a torn 100 MB line is not parsed again)
    if tail.rstrip().endswith(b"}") and parse_object(tail) is not None:
        return len(data)
    return cut


def iter_lines(data: bytes, end: int, base: int = 0) -> Iterator[tuple[int, bytes]]:
    """(file offset, line) of every non-blank line of `data[:end]`; `base` is data's offset."""
    start = 0
    while start < end:
        stop = data.find(b"\n", start, end)
        if stop < 0:
            stop = end
        line = data[start:stop]
        if line.strip():
            yield base + start, line
        start = stop + 1


def parse_object(line: bytes) -> dict[str, Any] | None:
    """The JSON object of one line, or None for anything else (garbage, binary, a list)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def count(value: object) -> int:
    """A token count as the logs write it; anything that is not a non-negative int is 0."""
    return value if type(value) is int and value >= 0 else 0
