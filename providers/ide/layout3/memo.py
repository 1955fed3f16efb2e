"""Decoded Cursor 3.x results remembered by content hash, in a file that outlives cache versions.

`agentKv:blob:<sha256>` rows are content-addressed: a blob id names its bytes for good, and a
root (`conversationState`) names its blobs by hash. So what a full parse decoded stays true
for the same bytes: the graph of a root whose every blob was there (keyed by the sha256 of
the root's text; kept only while every blob it reached is still stored) and the agent-stream
record of each JSON row no root reached (keyed by blob id; `None`: the row is no record).
A start whose results cache was dropped (a version bump) reads these instead of decoding
~100,000 blobs again.

`MEMO_VERSION` is the memo's layout; the rules identity it also carries (`providers.rules`)
changes with any change of the deriving code, so a decoder changed makes it no memo. Anything
that does not read back exactly (corrupt, another database, another version, another Python,
too large) is no memo: the next full parse writes a new one. It holds counts, times, model and
tool names, request ids, workspace paths and command names (never a command line, a text or a
token).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import sys
from dataclasses import dataclass, field
from typing import Any, Final

from codeburn.providers.agent import Graph, GraphTurn, Record, command_names
from codeburn.providers.framing import body_at, framed, unframed_body
from codeburn.providers.rules import RULES

# 1: graphs (Graph, GraphTurn of issue 17) and stream records (Record of issue 16), as JSON.
# 2: the same in `marshal`'s form after a JSON head line, for speed: rows read back as the
# tuples the records are, with no JSON lists to build and convert first.
MEMO_VERSION: Final = 2
# `marshal`'s form is the interpreter's own (it writes the compiled modules in __pycache__):
# a memo written by another Python is no memo.
PYTHON: Final = sys.implementation.cache_tag or sys.version
# Bounds: a memo past them keeps the newest rows' records and no more graphs (a database of
# 50k messages holds ~700 graphs and ~20k unreached rows).
MAX_GRAPHS: Final = 100_000
MAX_RECORDS: Final = 1_000_000
MAX_BYTES: Final = 512 * 1024 * 1024
_ID_CHARS: Final = 64
_MARSHAL_VERSION: Final = 4


@dataclass(slots=True)
class BlobMemo:
    """What a full parse remembers: root digest → graph, blob id → stream record or None."""

    graphs: dict[str, Graph] = field(default_factory=dict)
    records: dict[str, Record | None] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.graphs or self.records)


def state_digest(state: str) -> str:
    """The key of a root in the memo: the sha256 of its `conversationState` text."""
    return hashlib.sha256(state.encode("utf-8", "surrogatepass")).hexdigest()


def _safe_record(record: Record) -> tuple[Any, ...]:
    """A record as the memo keeps it: a shell command is kept as its command names only
    (`command_names` gives them back from that form), never as the command line."""
    role, chars, request_id, model, tools, created_ms, served = record
    kept = tuple(
        (name, None if command is None else "\n".join(command_names(command)))
        for name, command in tools
    )
    return (role, chars, request_id, model, kept, created_ms, served)


def _graph_row(graph: Graph) -> tuple[Any, ...]:
    """A graph in `Graph`'s field order, its turns as rows (`missing_blobs` is 0: a graph
    with missing blobs is not kept)."""
    return (
        tuple(map(tuple, graph.turns)), graph.used_tokens, graph.started_ms,
        tuple(graph.workspace_uris), graph.skipped_blobs, graph.reached,
        frozenset(graph.request_ids),
    )  # fmt: skip


_MAGIC: Final = b"codeburn-blob-memo\n"


def _head(db_key: str) -> bytes:
    """The body's first line: what `memo_head_ok` checks before a full parse forks."""
    head = {"version": MEMO_VERSION, "rules": RULES, "python": PYTHON, "db": db_key}
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass") + b"\n"


# What a memo keeps, as `marshal` writes it: root digest → graph row, blob id → record row.
MemoRows = tuple[dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...] | None]]


def memo_rows(memo: BlobMemo) -> MemoRows:
    """What of `memo` the file keeps, as plain rows (`rows_bytes` encodes them)."""
    graphs = [(k, _graph_row(g)) for k, g in memo.graphs.items() if not g.missing_blobs]
    records = [(k, None if r is None else _safe_record(r)) for k, r in memo.records.items()]
    return dict(graphs[:MAX_GRAPHS]), dict(records[:MAX_RECORDS])


def rows_bytes(rows: MemoRows, db_key: str) -> bytes:
    """The memo's file content for the database `db_key`: a magic line, the CRC-32 of the
    body, the body (the head line, then the rows in `marshal`'s form). The checksum makes a
    damaged file no memo at all."""
    return framed(_MAGIC, _head(db_key) + marshal.dumps(rows, _MARSHAL_VERSION))


def _graph(row: tuple[Any, ...]) -> Graph:
    turns, used, started, uris, skipped, reached, request_ids = row
    if len(reached) % _ID_CHARS or type(request_ids) is not frozenset:
        raise ValueError("not a graph")
    turns = tuple(map(GraphTurn._make, turns))
    return Graph._make((turns, used, started, uris, skipped, reached, request_ids, 0))


def _record(row: tuple[Any, ...] | None) -> Record | None:
    if row is None:
        return None
    if len(row) != len(Record._fields):
        raise ValueError("not a record")
    # tuple.__new__: no constructor call for each of the memo's records (tens of thousands)
    return tuple.__new__(Record, row)


def memo_head_ok(data: bytes | None, db_key: str) -> bool:
    """Whether a memo file's content opens as an intact memo of this version, these rules,
    this Python and `db_key` would (its magic line, a checksum line and the head line; the
    checksum itself is not checked): a full parse decides from it, before it forks, what its
    second process does, and reads the memo in full after the fork."""
    if not data or len(data) > MAX_BYTES or not data.startswith(_MAGIC):
        return False
    at = body_at(_MAGIC)
    head = _head(db_key)
    return data[at - 1 : at] == b"\n" and data[at : at + len(head)] == head


def read_memo(data: bytes | None, db_key: str) -> BlobMemo | None:
    """The memo in a file's content; None unless it is intact, this version's, these rules',
    this Python's and `db_key`'s (anything else in its place fails the checksum, the head or
    the shape and is no memo)."""
    body = unframed_body(_MAGIC, data, MAX_BYTES)
    head = _head(db_key)
    if body is None or body[: len(head)] != head:
        return None
    try:
        graphs, records = marshal.loads(body[len(head) :])
        return BlobMemo(
            {k: _graph(g) for k, g in graphs.items()},
            {k: _record(r) for k, r in records.items()},
        )
    except (ValueError, TypeError, EOFError, AttributeError, RecursionError):
        return None
