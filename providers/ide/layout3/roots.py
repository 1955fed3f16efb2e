"""A Cursor 3.x conversation without bubbles read from its root graph, else its meter, else
counted unreadable with a reason (`Pass`); its blobs looked up by key (`Blobs`)."""

from __future__ import annotations

import binascii
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Protocol

from codeburn.providers.agent import (
    Graph,
    GraphUnreadable,
    Part,
    Parts,
    RootFields,
    TurnsWalked,
    decode_parts,
    finish_turns,
    graph_calls,
    part_of,
    reached_ids,
)
from codeburn.providers.calls import CURSOR, UNMAPPED_PROJECT, Call
from codeburn.providers.gauges import first_gauge
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3.headers import Composer
from codeburn.providers.ide.layout3.layout import (
    KNOWN_VERSION,
    METER,
    ROOT,
    ROOT_KEY_PREFIX,
    UNREADABLE,
    Layout3,
    Outcome,
)
from codeburn.providers.ide.layout3.metas import ConversationMeta
from codeburn.providers.ide.workspaces import path_project, project_name
from codeburn.providers.pricing import canonical_model, cost_of


def _unraised(exc: GraphUnreadable) -> GraphUnreadable:
    """A copy never raised, to keep: a raised one holds its frames, and through them the pass
    that raised it and every earlier pass (a long-lived reader grew by one pass per refresh)."""
    return GraphUnreadable(exc.reason, exc.used_tokens, exc.missing_blobs)


def root_bytes(state: str) -> bytes | None:
    try:
        return binascii.a2b_base64(state[1:], strict_mode=True)
    except (binascii.Error, ValueError):
        try:
            return binascii.a2b_base64(state[1:].replace("-", "+").replace("_", "/") + "==")
        except (binascii.Error, ValueError):
            return None


class _RowParts(Parts, Protocol):
    """Parts whose rows a walk found are collected in `rowids` (per root, see `Pass.decode`)."""

    rowids: set[int]

    def forget(self) -> None: ...


class Blobs:
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
class Pass:
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
        out.outcomes[cid] = Outcome(
            comp, meta, out.conversations.get(cid),
            out.parts[-1] if len(out.parts) > parts else None, out.unreadable_ids.get(cid),
            cid in out.skipped_gauges, graph, out.failed.get(cid), out.root_calls.get(cid),
        )  # fmt: skip

    def _replay(self, cid: str, kept: Outcome) -> None:
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
            raw = self.roots.get(cid) or root_bytes(state)
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
