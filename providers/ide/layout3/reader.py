"""Conversations of Cursor 3.x without bubbles: root graph, else meter, else unreadable.

One representation per conversation (issue 8 §2): conversations with any `bubbleId:` row stay
with the bubble reader; the others are read from their `conversationState` root (walking
`agentKv:blob:*` rows), else from the composerData meter alone, else counted as unreadable
with a reason. The agentKv rows a decoded root reaches belong to it: the reader leaves them
out of the agent stream, so they never become stream-only calls dated by the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Final, cast

from codeburn.providers.agent import (
    Graph,
    GraphUnreadable,
    Record,
    RootFields,
    TurnsWalked,
    record_of,
    root_fields,
    walk_turns,
)
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3.blob_scan import JsonRecords, ScannedParts, blob_rowids
from codeburn.providers.ide.layout3.headers import (
    Composer,
    read_composers,
)
from codeburn.providers.ide.layout3.layout import FIRST_GRAPH_VERSION, Layout3, has_index
from codeburn.providers.ide.layout3.memo import BlobMemo, state_digest
from codeburn.providers.ide.layout3.metas import conversation_metas
from codeburn.providers.ide.layout3.roots import Blobs, Pass, root_bytes


def _is_candidate(comp: Composer) -> bool:
    """Cursor 3.x conversations only: before 3.0 a composerData row alone meant nothing."""
    version = comp.version or 0
    return comp.listed or version >= FIRST_GRAPH_VERSION or (comp.state or "~") != "~"


# Which of a list of conversation ids have a `bubbleId:` row: one statement per 500 ids, each
# id one seek in the key index (a statement per id is slower).
_WITH_BUBBLES_SQL: Final = (
    "SELECT v.column1 FROM (VALUES {}) AS v WHERE EXISTS (SELECT 1 FROM cursorDiskKV"
    f" WHERE key >= '{scan.BUBBLE_LO}' || v.column1 || ':'"
    f" AND key < '{scan.BUBBLE_LO}' || v.column1 || ';')"
)


def _with_bubbles(conn: sqlite3.Connection, cids: list[str]) -> set[str]:
    """The ids among `cids` with any `bubbleId:<id>:` row."""
    found: set[str] = set()
    for chunk in scan.in_chunks(cids):
        sql = _WITH_BUBBLES_SQL.format(",".join(["(?)"] * len(chunk)))
        found.update(row[0] for row in conn.execute(sql, chunk))
    return found


class _BubbleProbe:
    """Which conversations have any `bubbleId:` row; the last pass's answer when their bubble
    rows cannot have changed (so a refresh does not probe every conversation)."""

    def __init__(
        self, conn: sqlite3.Connection, previous: Layout3, probe: Collection[str] | None
    ) -> None:
        self.conn = conn
        self.known = (previous.bubble_ids, previous.no_bubbles) if probe is not None else None
        self.probe = probe if probe is not None else ()

    def among(self, cids: list[str]) -> set[str]:
        """The ids among `cids` with bubbles."""
        found: set[str] = set()
        unknown: list[str] = []
        if self.known is None:
            unknown = cids
        else:
            with_bubbles, without = self.known
            for cid in cids:
                if cid not in self.probe:
                    if cid in with_bubbles:
                        found.add(cid)
                        continue
                    if cid in without:
                        continue
                unknown.append(cid)
        if unknown:
            found |= _with_bubbles(self.conn, unknown)
        return found


def _agent_rows(
    graphs: dict[str, tuple[str, Graph, frozenset[int]]], previous: Layout3
) -> tuple[frozenset[int], frozenset[int] | None]:
    """The agent rows the decoded roots reach, and those the last pass's did not (None when
    some may have gone: then nobody knows without comparing). A refresh mostly only adds."""
    before = previous.graphs
    added: set[int] = set()
    for cid, (_state, _graph, rowids) in graphs.items():
        old = before.get(cid)
        if old is None or old[2] is not rowids:
            if old is not None and not old[2] <= rowids:
                break
            added.update(rowids)
    else:
        if before.keys() <= graphs.keys():
            added -= previous.skip_rowids
            if not added:
                return previous.skip_rowids, frozenset()
            return previous.skip_rowids | added, frozenset(added)
    return frozenset().union(*(g[2] for g in graphs.values())), None


def _request_ids(
    graphs: dict[str, tuple[str, Graph, frozenset[int]]], previous: Layout3
) -> frozenset[str]:
    """The request ids the decoded roots name: the last pass's when every graph is its."""
    before = previous.graphs
    if before.keys() == graphs.keys() and all(before[c][1] is g[1] for c, g in graphs.items()):
        return previous.request_ids
    return frozenset().union(*(g[1].request_ids for g in graphs.values()))


def _scan_roots(composers: dict[str, Composer], ids: list[str]) -> dict[str, RootFields]:
    """The roots a full parse decodes (a root that does not parse fails again later)."""
    roots: dict[str, RootFields] = {}
    for cid in ids:
        comp = composers[cid]
        state = comp.state
        if comp.bad_data or state is None or not state.startswith("~") or len(state) < 2:
            continue
        raw = root_bytes(state)
        if raw is None:
            continue
        try:
            roots[cid] = root_fields(raw)
        except GraphUnreadable:
            continue
    return roots


def read_layout3(
    conn: sqlite3.Connection,
    db_path: Path,
    workspace_projects: dict[str, str],
    previous: Layout3 | None = None,
    *,
    probe: Collection[str] | Callable[[], Collection[str] | None] | None = None,
    scan_upto: int | None = None,
    json_aside: Callable[[], JsonRecords] | None = None,
    memo: BlobMemo | None = None,
    rowids_aside: Callable[[], dict[str, int]] | None = None,
    settled_before_ms: int | None = None,
    remember: bool = True,
    index_known: bool | None = None,
    fingerprint: str | None = None,
) -> Layout3:
    """The 3.x pass over one database (one short read per query).

    Cursor 3.0 and later always keep a conversation index (the global ItemTable headers, then
    the composerHeaders table): without one the database is an older build's, and the pass
    reads nothing (reading an older build's composerData rows would buy nothing).
    `probe`: the conversations whose bubble rows may have changed since `previous` (None: any;
    a callable: asked once the composers are read, so that what it needs is found meanwhile).
    `rowids_aside`: with a memo, the blob rows' ROWIDs (`blob_rowids`) from another process.
    With `scan_upto` (a full parse) and some root to decode, the blobs are read in one pass
    over the rows up to that ROWID (`blob_scan`; `json_aside`: its JSON rows from another
    process), and `records` keeps the pass's JSON rows for the agent stream; otherwise they
    are looked up by key (a refresh decodes only the roots that changed) and `records` stays
    None: the agent stream is walked on its own. `settled_before_ms` (a refresh) and
    `remember`: see `read_composers`. With `memo` (a full parse; empty: none kept
    yet) the roots it knows are not decoded again, and `out.memo` is what to keep next.
    `index_known`: `layout3_present` as the caller just found it (None: look).
    `fingerprint`: the workspace storage's (`storage_fingerprint`) that `workspace_projects`
    was read at: unchanged, with the same composers, the last pass's metas are kept.
    """
    if not (has_index(conn) if index_known is None else index_known):
        return Layout3()
    previous = previous if previous is not None else Layout3()
    # (a refresh reads only some rows: its bubble conversations read their meta themselves)
    fields: dict[str, tuple[Any, ...]] | None = {} if settled_before_ms is None else None
    composers, indexed = read_composers(
        conn, previous.composer_rows, settled_before_ms=settled_before_ms, remember=remember,
        fields=fields,
    )  # fmt: skip
    out = Layout3(indexed=indexed, composer_rows=previous.composer_rows, data_fields=fields)
    last = previous.metas_of
    same_storage = last is not None and (last[0], last[1]) == (fingerprint, workspace_projects)
    made = conversation_metas(
        composers, db_path, workspace_projects, last[2] if last and same_storage else None
    )
    out.metas = made[2]
    if fingerprint is not None and remember:
        out.metas_of = (fingerprint, workspace_projects, made)
    for cid, meta in out.metas.items():
        if meta.project is not None and meta.project != workspace_projects.get(cid):
            out.projects[cid] = meta.project
        if meta.model is not None:
            out.models[cid] = meta.model
    candidates = [cid for cid in sorted(composers) if _is_candidate(composers[cid])]
    asked = probe() if callable(probe) else probe
    out.bubble_ids = _BubbleProbe(conn, previous, asked).among(candidates)
    no_bubbles = [cid for cid in candidates if cid not in out.bubble_ids]
    out.no_bubbles = frozenset(no_bubbles)
    aside = (json_aside, rowids_aside)
    work = _full_pass(conn, out, previous, composers, no_bubbles, scan_upto, aside, memo)
    for cid in no_bubbles:
        work.conversation(cid, composers[cid])
    out.skip_rowids, out.skip_changed = _agent_rows(out.graphs, previous)
    out.request_ids = _request_ids(out.graphs, previous)
    if work.known and memo is not None:
        out.records = _memo_records(conn, work.rowid_of, out.skip_rowids, memo)
    if scan_upto is not None and memo is not None:
        out.memo = _next_memo(out, work, memo)
    return out


def _full_pass(
    conn: sqlite3.Connection,
    out: Layout3,
    previous: Layout3,
    composers: dict[str, Composer],
    no_bubbles: list[str],
    scan_upto: int | None,
    aside: tuple[Callable[[], JsonRecords] | None, Callable[[], dict[str, int]] | None],
    memo: BlobMemo | None,
) -> Pass:
    """How the roots get their blobs: the memo's graphs (a full parse after a version bump),
    the one pass over every blob row (a full parse), else lookups by key (a refresh).
    `aside`: the pass's JSON records, and the blob rows' ROWIDs, from another process."""
    json_aside, rowids_aside = aside
    if scan_upto is None:
        return Pass(conn, out, previous, Blobs(conn), {})
    known = _known_graphs(memo, composers, no_bubbles) if memo else None
    if known is not None:
        work = Pass(conn, out, previous, Blobs(conn), {}, known)
        if rowids_aside is not None:  # read meanwhile: the calls first
            work.call_early(composers)
        work.rowid_of = rowids_aside() if rowids_aside is not None else blob_rowids(conn, scan_upto)
        return work
    roots = _scan_roots(composers, no_bubbles)
    if not roots:  # no root: no blob is needed, no pass over them
        return Pass(conn, out, previous, Blobs(conn), roots)
    scanned = ScannedParts(conn, json_aside)
    walked: dict[str, tuple[TurnsWalked, set[int]]] = {}
    scanned.read(roots.values(), scan_upto, partial(_walk_ahead, scanned, roots, walked))
    out.records = scanned.records
    return Pass(conn, out, previous, scanned, roots, rowid_of=scanned.rowid_of, walked=walked)


def _walk_ahead(
    parts: ScannedParts,
    roots: dict[str, RootFields],
    walked: dict[str, tuple[TurnsWalked, set[int]]],
) -> None:
    """Every root's turn blobs walked while the JSON rows are decoded in the other process
    (that was the parent's wait: its graph walk needs the prompt records); each root's
    graph is finished by `Pass.decode` in the usual order."""
    for cid, fields in roots.items():
        parts.rowids = set()
        walked[cid] = (walk_turns(fields, parts), parts.rowids)


def _known_graphs(
    memo: BlobMemo, composers: dict[str, Composer], ids: list[str]
) -> dict[str, Graph] | None:
    """The memo's graphs of these roots, when it knows at least half of them (otherwise one
    pass over the blobs is cheaper than looking the others' blobs up by key)."""
    known: dict[str, Graph] = {}
    roots = 0
    for cid in ids:
        state = composers[cid].state
        if state is None or not state.startswith("~") or len(state) < 2:
            continue
        roots += 1
        graph = memo.graphs.get(state_digest(state))
        if graph is not None:
            known[cid] = graph
    return known if known and len(known) * 2 >= roots else None


_MISS: Final = object()


def _memo_records(
    conn: sqlite3.Connection, rowid_of: dict[str, int], skip: frozenset[int], memo: BlobMemo
) -> JsonRecords:
    """(ROWID, record) of the JSON rows no root reached, newest first: from the memo, else
    decoded from their values (read by key)."""
    out: JsonRecords = []
    unknown: list[str] = []
    get = memo.records.get
    for key, rowid in rowid_of.items():
        if rowid in skip:
            continue
        record = get(key, _MISS)
        if record is _MISS:
            unknown.append(key)
        elif record is not None:
            out.append((rowid, cast(Record, record)))
    for chunk in scan.in_chunks(unknown):
        rows = scan.fetch(
            conn,
            "SELECT rowid, CAST(value AS BLOB) FROM cursorDiskKV"
            f" WHERE key IN ({','.join('?' * len(chunk))})",
            [scan.AGENT_LO + k for k in chunk],
        )
        for rowid, value in rows:
            record = record_of(value)
            if record is not None:
                out.append((int(rowid), record))
    out.sort(key=itemgetter(0), reverse=True)
    return out


def _next_memo(out: Layout3, work: Pass, memo: BlobMemo) -> BlobMemo:
    """What this full parse remembers: the graphs of roots whose every blob was stored, the
    stream record (or None) of each row no root reached."""
    graphs = {
        state_digest(state): graph
        for state, graph, _rows in out.graphs.values()
        if not graph.missing_blobs
    }
    skip = out.skip_rowids
    key_of = {rowid: key for key, rowid in work.rowid_of.items() if rowid not in skip}
    records: dict[str, Record | None] = dict.fromkeys(key_of.values())
    for rowid, record in out.records or ():
        key = key_of.get(rowid)
        if key is not None:
            records[key] = record
    return BlobMemo(graphs, records)
