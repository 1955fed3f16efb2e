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
that does not read back exactly (corrupt, another database, another version, too large) is no
memo: the next full parse writes a new one. It holds counts, times, model and tool names,
request ids, workspace paths and command names (never a command line, a text or a token).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Final

from codeburn.providers.agent import Graph, GraphTurn, Record, command_names
from codeburn.providers.framing import framed, unframed
from codeburn.providers.rules import RULES

# 1: graphs (Graph, GraphTurn of issue 17) and stream records (Record of issue 16).
MEMO_VERSION: Final = 1
# Bounds: a memo past them keeps the newest rows' records and no more graphs (a database of
# 50k messages holds ~700 graphs and ~20k unreached rows).
MAX_GRAPHS: Final = 100_000
MAX_RECORDS: Final = 1_000_000
MAX_BYTES: Final = 512 * 1024 * 1024
_ID_CHARS: Final = 64


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


def _safe_record(record: Record) -> list[Any]:
    """A record as JSON: a shell command is kept as its command names only (`command_names`
    gives them back from that form), never as the command line."""
    role, chars, request_id, model, tools, created_ms, served = record
    kept = [
        [name, None if command is None else "\n".join(command_names(command))]
        for name, command in tools
    ]
    return [role, chars, request_id, model, kept, created_ms, served]


def _turn_json(t: GraphTurn) -> list[Any]:
    return [
        t.timestamp_ms, t.user_chars, t.context_chars, t.assistant_chars, t.model,
        list(t.tools), list(t.commands), t.served, t.end_ms,
    ]  # fmt: skip


def _graph_json(graph: Graph) -> list[Any]:
    turns = [_turn_json(t) for t in graph.turns]
    return [
        graph.used_tokens, graph.started_ms, list(graph.workspace_uris), graph.skipped_blobs,
        graph.reached, list(graph.request_ids), turns,
    ]  # fmt: skip


_MAGIC: Final = b"codeburn-blob-memo\n"


def memo_bytes(memo: BlobMemo, db_key: str) -> bytes:
    """The memo's file content for the database `db_key`: a magic line, the CRC-32 of the
    body, the body (JSON). The checksum makes a damaged file no memo at all."""
    graphs = [(k, _graph_json(g)) for k, g in memo.graphs.items() if not g.missing_blobs]
    records = {k: None if r is None else _safe_record(r) for k, r in memo.records.items()}
    body = json.dumps(
        {
            "version": MEMO_VERSION,
            "rules": RULES,
            "db": db_key,
            "graphs": dict(graphs[:MAX_GRAPHS]),
            "records": dict(list(records.items())[:MAX_RECORDS]),
        },
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8", "surrogatepass")
    return framed(_MAGIC, body)


def _graph(raw: list[Any]) -> Graph:
    used, started, uris, skipped, reached, request_ids, turns = raw
    if len(reached) % _ID_CHARS:
        raise ValueError("blob ids")
    return Graph(
        turns=tuple(
            [
                GraphTurn(ts, u, c, a, m, tuple(tl), tuple(cm), sv, e)
                for ts, u, c, a, m, tl, cm, sv, e in turns
            ]
        ),
        used_tokens=used,
        started_ms=started,
        workspace_uris=tuple(uris),
        skipped_blobs=skipped,
        reached=reached,
        request_ids=frozenset(request_ids),
    )


def _record(raw: list[Any] | None) -> Record | None:
    if raw is None:
        return None
    role, chars, request_id, model, tools, created_ms, served = raw
    # tuple.__new__: no constructor call for each of the memo's records (tens of thousands)
    fields = (role, chars, request_id, model, tuple(map(tuple, tools)), created_ms, served)
    return tuple.__new__(Record, fields)


def memo_head_ok(data: bytes | None, db_key: str) -> bool:
    """Whether a memo file's content opens as an intact memo of this version and of `db_key`
    would (its magic line, a checksum line and the body's first members; the checksum itself
    is not checked): a full parse decides from it, before it forks, what its second process
    does, and reads the memo in full after the fork."""
    if not data or len(data) > MAX_BYTES or not data.startswith(_MAGIC):
        return False
    at = len(_MAGIC) + 9
    db = json.dumps(db_key, ensure_ascii=False).encode("utf-8", "surrogatepass")
    # as `memo_bytes` writes it
    head = b'{"version":%d,"rules":"%b","db":%b,' % (MEMO_VERSION, RULES.encode(), db)
    return data[at - 1 : at] == b"\n" and data[at : at + len(head)] == head


def read_memo(data: bytes | None, db_key: str) -> BlobMemo | None:
    """The memo in a file's content; None unless it is intact, this version's and `db_key`'s
    (anything else in its place fails the checksum or the shape and is no memo)."""
    parsed = unframed(_MAGIC, data, MAX_BYTES)
    try:
        if type(parsed) is not dict or parsed.get("version") != MEMO_VERSION:
            return None
        if parsed.get("rules") != RULES or parsed.get("db") != db_key:
            return None
        graphs, records = parsed["graphs"], parsed["records"]
        return BlobMemo(
            {k: _graph(g) for k, g in graphs.items()},
            {k: _record(r) for k, r in records.items()},
        )
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
