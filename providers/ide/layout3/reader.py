"""Conversations of Cursor 3.x without bubbles: root graph, else meter, else unreadable.

One representation per conversation (issue 8 §2): conversations with any `bubbleId:` row stay
with the bubble reader; the others are read from their `conversationState` root (walking
`agentKv:blob:*` rows), else from the composerData meter alone, else counted as unreadable
with a reason. The agentKv rows a decoded root reaches belong to it: the reader leaves them
out of the agent stream, so they never become stream-only calls dated by the file.
"""

from __future__ import annotations

import binascii
import sqlite3
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Final, Protocol, cast

from codeburn.providers.agent import (
    Graph,
    GraphUnreadable,
    Part,
    Parts,
    Record,
    RootFields,
    TurnsWalked,
    decode_parts,
    finish_turns,
    graph_calls,
    part_of,
    reached_ids,
    record_of,
    root_fields,
    walk_turns,
)
from codeburn.providers.calls import CURSOR, UNMAPPED_PROJECT, Call
from codeburn.providers.gauges import first_gauge
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3.blob_scan import JsonRecords, ScannedParts, blob_rowids
from codeburn.providers.ide.layout3.headers import (
    Composer,
    ComposerRows,
    ConversationMeta,
    MetasMade,
    conversation_metas,
    has_index,
    has_root,
    read_composers,
)
from codeburn.providers.ide.layout3.memo import BlobMemo, state_digest
from codeburn.providers.ide.workspaces import path_project, project_name
from codeburn.providers.pricing import canonical_model, cost_of

BUBBLES: Final = "bubbles"
ROOT: Final = "root"
METER: Final = "meter"
UNREADABLE: Final = "unreadable"
# The newest composerData `_v` whose layout is known (Cursor 3.22).
KNOWN_VERSION: Final = 18
FIRST_GRAPH_VERSION: Final = 17
ROOT_KEY_PREFIX: Final = "cursor:root:"


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What a pass made of one conversation without bubbles, and from what: the next pass
    replays it while the composer (the same object: its sources did not change) and its meta
    are the same, and no blob it missed can arrive (so a refresh need not look at each)."""

    comp: Composer
    meta: ConversationMeta
    kind: str | None  # its entry in `conversations`
    part: list[Call] | None
    reason: str | None  # unreadable for this reason
    skipped_gauge: bool
    graph: tuple[str, Graph, frozenset[int]] | None
    failed: tuple[str, GraphUnreadable] | None
    root_calls: tuple[tuple[Any, ...], list[Call], Graph] | None


@dataclass(slots=True)
class Layout3:
    """What the 3.x pass found (all empty for a database of older builds)."""

    conversations: dict[str, str] = field(default_factory=dict)  # non-bubble ones
    bubble_ids: set[str] = field(default_factory=set)  # 3.x conversations with bubbles
    metas: dict[str, ConversationMeta] = field(default_factory=dict)
    unreadable: dict[str, int] = field(default_factory=dict)
    unreadable_ids: dict[str, str] = field(default_factory=dict)  # conversation id → reason
    skipped_gauges: set[str] = field(default_factory=set)  # ids: a meter above the bound
    calls: list[Call] = field(default_factory=list)
    # the same calls as lists that stay the same objects while their conversation is unchanged
    parts: list[list[Call]] = field(default_factory=list)
    skip_rowids: frozenset[int] = frozenset()  # agentKv rows reached from decoded roots
    request_ids: frozenset[str] = frozenset()
    projects: dict[str, str] = field(default_factory=dict)  # from headers / composerData
    models: dict[str, str] = field(default_factory=dict)  # composerData.modelConfig
    indexed: bool = False  # a composerHeaders table or ItemTable headers exist
    # composer id → (conversationState, its graph, the agent rows it reached): a refresh
    # decodes only roots that changed (blobs are content-addressed, so a root's bytes fix them)
    graphs: dict[str, tuple[str, Graph, frozenset[int]]] = field(default_factory=dict)
    # ... and the roots that could not be read although every blob was there, and the calls
    # of each decoded root with what they were made from (so a refresh keeps their calls)
    failed: dict[str, tuple[str, GraphUnreadable]] = field(default_factory=dict)
    root_calls: dict[str, tuple[tuple[Any, ...], list[Call], Graph]] = field(default_factory=dict)
    # the rows the composers were parsed from, and the candidates found without a bubble row
    # (with `bubble_ids`: a refresh probes again only conversations whose bubbles may differ)
    composer_rows: ComposerRows = field(default_factory=ComposerRows)
    no_bubbles: frozenset[str] = frozenset()
    skip_changed: frozenset[int] | None = None  # skip_rowids ^ the last pass's (None: unknown)
    # composer id → what the pass made of a conversation without bubbles (see `_Outcome`)
    outcomes: dict[str, _Outcome] = field(default_factory=dict)
    # A full parse's pass over the blobs: the JSON rows, newest first, for the agent stream
    # (the reader takes them: None once used).
    records: JsonRecords | None = None
    # ... and what it remembers for the next one (`memo`; the reader saves it: None once done)
    memo: BlobMemo | None = None
    # A full parse's composerData fields by composer id (`read_composers`), for the bubble
    # conversations' meta (`composer_fields`; the reader takes them: None once used)
    data_fields: dict[str, tuple[Any, ...]] | None = None
    # the workspace storage's fingerprint and project map `metas` were made with, and what
    # they were made of (None: not kept): a refresh with the same ones keeps the metas of
    # the composers it kept (`conversation_metas`)
    metas_of: tuple[str, dict[str, str], MetasMade] | None = None

    def composer_fields(
        self, composer_ids: list[str], places: tuple[int, ...]
    ) -> tuple[dict[str, tuple[Any, ...]], list[str]]:
        """The fields at `places` (`META_PLACES`, `TIMES_PLACES`) of these conversations'
        composerData rows as this pass parsed them, and the ids it has none for (every id
        when no full parse's pass ran)."""
        data = self.data_fields
        if data is None:
            return {}, composer_ids
        found: dict[str, tuple[Any, ...]] = {}
        missing: list[str] = []
        for cid in composer_ids:
            row = data.get(cid)
            if row is None:
                missing.append(cid)
            else:
                found[cid] = tuple([row[i] for i in places])
        return found, missing

    def forget_memos(self) -> None:
        """Drop what only a refresh reuses (a one-shot read): the parsed composer rows, the
        calls of each root, the roots that failed. The graphs stay (their turns are read)."""
        self.composer_rows = ComposerRows()
        self.metas_of = None
        self.root_calls = {}
        self.failed = {}
        self.outcomes = {}

    @property
    def present(self) -> bool:
        """Anything of Cursor 3.x in the database (a refresh then runs the pass again)."""
        return self.indexed or bool(self.conversations or self.bubble_ids)


def layout3_present(conn: sqlite3.Connection, *, roots: bool | None = None) -> bool:
    """Whether the database has a Cursor 3.x conversation index (cheap: no value is read,
    unless it has neither kind of header: then `has_root`, unless `roots` says it)."""
    return has_index(conn, roots=roots)


def roots_present(conn: sqlite3.Connection) -> bool:
    """Whether some composerData row holds a `conversationState` root (one SQL pass over the
    composerData rows, no JSON decoded): without one the blobs need no pass of their own."""
    return has_root(conn)


def any_json_rows(conn: sqlite3.Connection, rowids: list[int]) -> bool:
    """Whether any of these rows is a JSON value (only those feed the agent stream)."""
    for chunk in scan.in_chunks(rowids):
        row = conn.execute(
            f"SELECT 1 FROM cursorDiskKV WHERE rowid IN ({','.join('?' * len(chunk))})"
            " AND hex(substr(value, 1, 1)) = '7B' LIMIT 1",
            chunk,
        ).fetchone()
        if row is not None:
            return True
    return False


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


def _unraised(exc: GraphUnreadable) -> GraphUnreadable:
    """A copy never raised, to keep: a raised one holds its frames, and through them the pass
    that raised it and every earlier pass (a long-lived reader grew by one pass per refresh)."""
    return GraphUnreadable(exc.reason, exc.used_tokens, exc.missing_blobs)


def _root_bytes(state: str) -> bytes | None:
    try:
        return binascii.a2b_base64(state[1:], strict_mode=True)
    except (binascii.Error, ValueError):
        try:
            return binascii.a2b_base64(state[1:].replace("-", "+").replace("_", "/") + "==")
        except (binascii.Error, ValueError):
            return None


class _RowParts(Parts, Protocol):
    """Parts whose rows a walk found are collected in `rowids` (per root, see `_Pass.decode`)."""

    rowids: set[int]

    def forget(self) -> None: ...


class _Blobs:
    """Looks blobs up by hex id, remembering the ROWIDs it found; `prefetch` reads a level of
    a graph in one query per 500 ids (one query per blob is far slower)."""

    reads_ahead = True

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.rowids: set[int] = set()
        self._ahead: dict[str, tuple[int, bytes] | None] = {}

    def part(self, key: str, role: int) -> Part | None:
        data = self(key)
        return None if data is None else part_of(data, role)

    def prefetch(self, ids: list[str], role: int = 0) -> None:
        wanted = [i for i in dict.fromkeys(ids) if i not in self._ahead]
        for chunk in scan.in_chunks(wanted):
            self._ahead.update(dict.fromkeys(chunk))
            rows = scan.fetch(
                self.conn,
                "SELECT substr(key, 14), rowid, CAST(value AS BLOB) FROM cursorDiskKV"
                f" WHERE key IN ({','.join('?' * len(chunk))})",
                [scan.AGENT_LO + i for i in chunk],
            )
            for key, rowid, value in rows:
                if value is not None:
                    self._ahead[key] = (int(rowid), bytes(value))

    def __call__(self, blob_id: str) -> bytes | None:
        if blob_id in self._ahead:
            # kept until `forget`: one blob (a shared system prompt) recurs within a root
            found = self._ahead[blob_id]
        else:
            rows = scan.fetch(
                self.conn,
                "SELECT rowid, CAST(value AS BLOB) FROM cursorDiskKV WHERE key = ?",
                (scan.AGENT_LO + blob_id,),
            )
            found = (int(rows[0][0]), bytes(rows[0][1])) if rows and rows[0][1] else None
            self._ahead[blob_id] = found
        if found is None:
            return None
        self.rowids.add(found[0])
        return found[1]

    def forget(self) -> None:
        """Drop what was read ahead and not asked for (between roots)."""
        self._ahead.clear()


def _meter_call(cid: str, meta: ConversationMeta, meter: int, project: str) -> Call | None:
    ts = meta.created_ms or meta.updated_ms
    if ts is None:
        return None
    model = canonical_model(meta.model)
    cost, priced = cost_of(model, meter, 0)
    return Call(
        f"cursor:composer-input:{cid}", CURSOR, model, project, cid, ts, meter, 0, 0, 0, cost,
        True, False, priced,
    )  # fmt: skip


def _graph_project(graph: Graph) -> str | None:
    for uri in graph.workspace_uris:
        return project_name(uri) if "://" in uri else path_project(uri)
    return None


@dataclass(slots=True)
class _Pass:
    conn: sqlite3.Connection
    out: Layout3
    previous: Layout3
    parts: _RowParts
    roots: dict[str, RootFields]  # parsed already (a full parse)
    # a full parse with a memo: graphs known by root (`memo`), and every blob row's ROWID
    known: dict[str, Graph] = field(default_factory=dict)
    rowid_of: dict[str, int] = field(default_factory=dict)
    # the calls of known graphs, made before the ROWIDs came (`call_early`), as root_calls
    early: dict[str, tuple[tuple[Any, ...], list[Call], Graph]] = field(default_factory=dict)
    missed: bool = False  # the conversation being read missed a blob
    # roots whose turns the one pass walked already, with the rows they reached (`walk_ahead`)
    walked: dict[str, tuple[TurnsWalked, set[int]]] = field(default_factory=dict)

    def unreadable(self, cid: str, reason: str) -> None:
        self.out.conversations[cid] = UNREADABLE
        self.out.unreadable[reason] = self.out.unreadable.get(reason, 0) + 1
        self.out.unreadable_ids[cid] = reason

    def gauge(self, cid: str, *meters: int) -> int:
        """The first meter within the gauge bound; one above it is counted."""
        meter, skipped = first_gauge(*meters)
        if skipped:
            self.out.skipped_gauges.add(cid)
        return meter

    def meter(self, cid: str, comp: Composer, meter: int, reason: str | None) -> None:
        """The meter alone, else unreadable for `reason` (nothing at all: an empty chat)."""
        meta = self.out.metas[cid]
        call = _meter_call(cid, meta, meter, meta.project or UNMAPPED_PROJECT) if meter else None
        if call is not None:
            self.out.conversations[cid] = METER
            self.out.calls.append(call)
            self.out.parts.append([call])
        elif meter:
            self.unreadable(cid, "undated")
        elif reason is not None:
            self.unreadable(cid, reason)

    def conversation(self, cid: str, comp: Composer) -> None:
        """Read one conversation without bubbles, or replay what the last pass made of it."""
        out = self.out
        meta = out.metas[cid]
        kept = self.previous.outcomes.get(cid)
        if kept is not None and kept.comp is comp and kept.meta == meta:
            self._replay(cid, kept)
            return
        parts, self.missed = len(out.parts), False
        self._conversation(cid, comp)
        graph = out.graphs.get(cid)
        if self.missed or (graph is not None and graph[1].missing_blobs):
            return  # a missing blob may arrive: read it again next time
        out.outcomes[cid] = _Outcome(
            comp, meta, out.conversations.get(cid),
            out.parts[-1] if len(out.parts) > parts else None, out.unreadable_ids.get(cid),
            cid in out.skipped_gauges, graph, out.failed.get(cid), out.root_calls.get(cid),
        )  # fmt: skip

    def _replay(self, cid: str, kept: _Outcome) -> None:
        out = self.out
        if kept.kind is not None:
            out.conversations[cid] = kept.kind
        if kept.part is not None:
            out.calls.extend(kept.part)
            out.parts.append(kept.part)
        if kept.reason is not None:
            out.unreadable[kept.reason] = out.unreadable.get(kept.reason, 0) + 1
            out.unreadable_ids[cid] = kept.reason
        if kept.skipped_gauge:
            out.skipped_gauges.add(cid)
        if kept.graph is not None:
            out.graphs[cid] = kept.graph
        if kept.failed is not None:
            out.failed[cid] = kept.failed
        if kept.root_calls is not None:
            out.root_calls[cid] = kept.root_calls
        out.outcomes[cid] = kept

    def _conversation(self, cid: str, comp: Composer) -> None:
        newer = (comp.version or 0) > KNOWN_VERSION
        state = comp.state
        if comp.skipped_gauge:
            self.out.skipped_gauges.add(cid)
        if comp.bad_data:
            self.unreadable(cid, "undecodable")
        elif state is not None and state.startswith("~") and len(state) > 1:
            self.root(cid, comp, state, newer)
        elif state not in (None, "~"):
            self.meter(cid, comp, comp.meter, "unknown-version" if newer else "undecodable")
        else:
            self.meter(cid, comp, comp.meter, "unknown-version" if newer else None)

    def decode(self, cid: str, state: str) -> Graph:
        """The root's graph, reused from the last pass when its bytes did not change (blobs are
        content-addressed: only a missing blob can change what a root reads)."""
        failed = self.previous.failed.get(cid)
        if failed is not None and failed[0] == state:
            self.out.failed[cid] = failed
            raise _unraised(failed[1])
        memo = self.previous.graphs.get(cid)
        known = self._known(cid)
        if memo is not None and memo[0] == state and not memo[1].missing_blobs:
            graph, rowids = memo[1], memo[2]
        elif known is not None:
            graph, rowids = known
        else:
            raw = self.roots.get(cid) or _root_bytes(state)
            if raw is None:
                raise GraphUnreadable("undecodable")
            walked = self.walked.pop(cid, None)
            self.parts.rowids = walked[1] if walked is not None else set()
            try:
                graph = decode_parts(raw, self.parts) if walked is None else finish_turns(walked[0])
            except GraphUnreadable as exc:
                if not exc.missing_blobs:
                    self.out.failed[cid] = (state, _unraised(exc))
                raise
            finally:
                self.parts.forget()
            rowids = frozenset(self.parts.rowids)
        self.out.graphs[cid] = (state, graph, rowids)
        return graph

    def _known(self, cid: str) -> tuple[Graph, frozenset[int]] | None:
        """The memo's graph of this root and its rows, while every blob it reached is stored
        (content-addressed: the same root over the same blobs is the same graph)."""
        graph = self.known.get(cid)
        if graph is None:
            return None
        rowid_of = self.rowid_of
        try:
            return graph, frozenset([rowid_of[key] for key in reached_ids(graph)])
        except KeyError:
            return None

    def calls(self, cid: str, state: str, graph: Graph, meter: int) -> list[Call]:
        """`graph_calls`, reused when the root and everything else it reads are unchanged."""
        made_of, project = self._made_of(cid, state, graph, meter)
        # and the same graph object: one decoded again (a blob arrived) makes new calls
        memo = self.previous.root_calls.get(cid)
        if memo is None or memo[0] != made_of or memo[2] is not graph:
            memo = self.early.get(cid)
        if memo is not None and memo[0] == made_of and memo[2] is graph:
            calls = memo[1]
        else:
            calls = self._graph_calls(cid, graph, project, meter)
        self.out.root_calls[cid] = (made_of, calls, graph)
        return calls

    def call_early(self, composers: dict[str, Composer]) -> None:
        """The calls of every graph the memo knows, made before its blobs are known to be
        stored: that needs the blob rows' ROWIDs, which another process reads meanwhile (a
        start after a version bump would otherwise wait for them). `calls` takes them for a root
        whose graph is the memo's; one whose blobs are not all stored is decoded anew."""
        for cid, graph in self.known.items():
            comp = composers[cid]
            if not graph.turns or comp.state is None:
                continue
            made_of, project = self._made_of(cid, comp.state, graph, comp.meter)
            self.early[cid] = (made_of, self._graph_calls(cid, graph, project, comp.meter), graph)

    def _made_of(
        self, cid: str, state: str, graph: Graph, meter: int
    ) -> tuple[tuple[Any, ...], str]:
        """What a root's calls are made of besides its graph, and the project among it."""
        meta = self.out.metas[cid]
        project = meta.project or _graph_project(graph) or UNMAPPED_PROJECT
        return (state, project, meta.model, meta.created_ms, meta.updated_ms, meter), project

    def _graph_calls(self, cid: str, graph: Graph, project: str, meter: int) -> list[Call]:
        meta = self.out.metas[cid]
        return graph_calls(
            graph, conversation_id=cid, provider=CURSOR, project=project,
            fallback_model=meta.model, created_ms=meta.created_ms,
            updated_ms=meta.updated_ms, key_prefix=ROOT_KEY_PREFIX, meter_tokens=meter,
        )  # fmt: skip

    def root(self, cid: str, comp: Composer, state: str, newer: bool) -> None:
        try:
            graph = self.decode(cid, state)
        except GraphUnreadable as exc:
            self.missed = self.missed or bool(exc.missing_blobs)
            reason = "unknown-version" if newer else exc.reason
            if comp.encrypted and reason in ("undecodable", "missing-blobs"):
                reason = "encrypted"
            self.meter(cid, comp, self.gauge(cid, comp.meter, exc.used_tokens), reason)
            return
        if not graph.turns:
            self.meter(cid, comp, self.gauge(cid, comp.meter, graph.used_tokens), None)
            return
        self.gauge(cid, graph.used_tokens)  # graph_calls skips it likewise: counted here
        calls = self.calls(cid, state, graph, comp.meter)
        if calls:
            self.out.conversations[cid] = ROOT
            self.out.calls.extend(calls)
            self.out.parts.append(calls)
        elif any(t.user_chars or t.context_chars or t.assistant_chars for t in graph.turns):
            self.unreadable(cid, "undated")
        else:
            self.meter(cid, comp, comp.meter, None)


def _scan_roots(composers: dict[str, Composer], ids: list[str]) -> dict[str, RootFields]:
    """The roots a full parse decodes (a root that does not parse fails again later)."""
    roots: dict[str, RootFields] = {}
    for cid in ids:
        comp = composers[cid]
        state = comp.state
        if comp.bad_data or state is None or not state.startswith("~") or len(state) < 2:
            continue
        raw = _root_bytes(state)
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
) -> _Pass:
    """How the roots get their blobs: the memo's graphs (a full parse after a version bump),
    the one pass over every blob row (a full parse), else lookups by key (a refresh).
    `aside`: the pass's JSON records, and the blob rows' ROWIDs, from another process."""
    json_aside, rowids_aside = aside
    if scan_upto is None:
        return _Pass(conn, out, previous, _Blobs(conn), {})
    known = _known_graphs(memo, composers, no_bubbles) if memo else None
    if known is not None:
        work = _Pass(conn, out, previous, _Blobs(conn), {}, known)
        if rowids_aside is not None:  # read meanwhile: the calls first
            work.call_early(composers)
        work.rowid_of = rowids_aside() if rowids_aside is not None else blob_rowids(conn, scan_upto)
        return work
    roots = _scan_roots(composers, no_bubbles)
    if not roots:  # no root: no blob is needed, no pass over them
        return _Pass(conn, out, previous, _Blobs(conn), roots)
    scanned = ScannedParts(conn, json_aside)
    walked: dict[str, tuple[TurnsWalked, set[int]]] = {}
    scanned.read(roots.values(), scan_upto, partial(_walk_ahead, scanned, roots, walked))
    out.records = scanned.records
    return _Pass(conn, out, previous, scanned, roots, rowid_of=scanned.rowid_of, walked=walked)


def _walk_ahead(
    parts: ScannedParts,
    roots: dict[str, RootFields],
    walked: dict[str, tuple[TurnsWalked, set[int]]],
) -> None:
    """Every root's turn blobs walked while the JSON rows are decoded in the other process
    (that was the parent's wait: its graph walk needs the prompt records); each root's
    graph is finished by `_Pass.decode` in the usual order."""
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


def _next_memo(out: Layout3, work: _Pass, memo: BlobMemo) -> BlobMemo:
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
