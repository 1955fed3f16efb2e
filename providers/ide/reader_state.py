"""The state a `CursorReader` keeps between reads, and what its full parse and refresh share."""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from array import array
from collections.abc import Callable
from operator import attrgetter
from pathlib import Path
from typing import Any, Final, Protocol

from codeburn.providers.agent import Graph, StreamRequest, StreamWalker, Turn
from codeburn.providers.calls import CURSOR, UNMAPPED_PROJECT, Call
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.emit import (
    Bubble,
    ComposerMeta,
    Conversation,
    bubble_turns,
    emit_conversation,
    skips_a_gauge,
)
from codeburn.providers.ide.layout3 import (
    BlobMemo,
    JsonRecords,
    Layout3,
    layout3_present,
    read_layout3,
    roots_present,
)
from codeburn.providers.ide.paths import workspace_storage_dir
from codeburn.providers.ide.project_maps import PROJECT_MAPS, ProjectMaps
from codeburn.providers.ide.rows import ConvState, scan_budget
from codeburn.providers.ide.stream_rows import by_rowid
from codeburn.providers.localtime import iso_utc
from codeburn.providers.plan import LONG_LIVED, Plan
from codeburn.providers.pricing import canonical_model, cost_of

RECENT_MS: Final = 15 * 60_000

_ROWID_OF: Final = attrgetter("rowid")
_REQUEST_OF: Final = attrgetter("request_id")
_TS_OF: Final = attrgetter("ts")


class MemoFile(Protocol):
    """Where the Cursor 3.x blob memo is kept between runs (see `layout3.memo`)."""

    # True when `save` may run in a forked process (it writes a file, not this one's memory)
    background: bool

    def load(self) -> bytes | None: ...
    def save(self, data: bytes) -> None: ...


class ReaderState:
    """One Cursor database's reader state; `FullParse` and `Refresh` build on it."""

    def __init__(
        self,
        db_path: Path,
        *,
        floor_ms: int,
        budget: int | None = None,
        first_seen: dict[str, int] | None = None,
        project_maps: ProjectMaps = PROJECT_MAPS,
        recent_ms: int = RECENT_MS,
        memo_file: MemoFile | None = None,
        plan: Plan = LONG_LIVED,
    ) -> None:
        """`plan`: how the read runs (`providers.plan`); a one-shot plan's reader is read once,
        and the Cursor 3.x pass's memos are dropped before the bubble scan, which would
        otherwise hold them too."""
        self.db_path = db_path
        self._memo_file = memo_file
        self.plan = plan
        self.floor_ms = floor_ms
        self.floor_iso = iso_utc(floor_ms)
        self.budget = budget if budget is not None else scan_budget()
        self.first_seen: dict[str, int] = dict(first_seen or {})
        self._project_maps = project_maps
        self._recent_ms = recent_ms
        self._reset()

    def _reset(self) -> None:
        self._ready = False
        self._convs: dict[str, ConvState] = {}
        self._request_conv: dict[str, list[str]] = {}
        self._other_requests: set[str] = set()
        self._walker = StreamWalker()
        self._agent_count = 0
        self._stream_calls: dict[str, Call] = {}
        self._dated: tuple[StreamWalker | None, int] = (None, 0)  # (walker, its requests dated)
        self._stream_part: list[Call] = []  # its values: one list object while they are the same
        # request id → (the request, its signature, its date, its call) of the last rebuild
        self._stream_made: dict[str, tuple[StreamRequest, tuple[Any, ...], int, Call | None]] = {}
        self._checked_stream_only: set[str] = set()
        self._kept_total = 0
        self._cutoff: int | None = None
        self._scan_lo = 0
        self._last_rowid = 0
        self._last_key: str | None = None
        self._bubble_count = 0
        self._total_count = 0
        self._ident: tuple[int, int] = (0, 0)
        self._full_at = 0.0
        self._skipped_sub = 0
        self._projects_fp = ""
        self._projects: dict[str, str] = {}
        self._l3 = Layout3()
        self._inline = False
        self._roots_known: bool | None = None  # this full parse's `_roots`
        # this full parse's (or refresh's) `layout3_present`: without the index it reads
        # every composerData row to say so, and it is asked up to three times
        self._index_known: bool | None = None
        # No header of either kind and no root up to the last row read: a refresh looks for
        # a root again only when a composerData row is among its new rows (looking costs more
        # as the table grows; a root written into an old row in place waits for the next
        # full parse, as such rows do in the 3.x pass)
        self._rootless = False
        # root id → (its graph, the graph's turns) of the last `turns`
        self._root_turns: dict[str, tuple[Graph, tuple[Turn, ...]]] = {}
        # recent conversation → (its rows' digest, the cutoff, its fallback model) when it
        # was last read (`_rewritten_in_place`); a dict of its own: a slot more in every
        # ConvState would raise a cold report's peak RSS
        self._seen_as: dict[str, tuple[bytes, int | None, str | None]] = {}

    # -- identity ---------------------------------------------------------------------------

    def _stat(self) -> tuple[int, int]:
        st = os.stat(self.db_path)
        return st.st_ino, st.st_size

    def _db_mtime_ms(self) -> int:
        times = [os.stat(self.db_path).st_mtime_ns]
        with contextlib.suppress(OSError):
            wal = os.stat(str(self.db_path) + "-wal")
            if wal.st_size:  # opening a WAL database read-only creates an empty WAL
                times.append(wal.st_mtime_ns)
        return max(times) // 1_000_000

    # -- shared by the full parse and the refresh -------------------------------------------

    def _roots(self, conn: sqlite3.Connection) -> bool:
        """Whether the 3.x index and a root exist: looked up once per full parse (a database
        without roots reads every composerData row to say so)."""
        if self._roots_known is None:
            self._roots_known = self._indexed(conn) and roots_present(conn)
        return self._roots_known

    def _indexed(self, conn: sqlite3.Connection) -> bool:
        """`layout3_present`, looked up once per full parse or refresh."""
        if self._index_known is None:
            self._index_known = layout3_present(conn, roots=False if self._rootless else None)
            self._rootless = not self._index_known
        return self._index_known

    def _agents_by_rowid(self) -> bool:
        """Whether a whole walk of the agent stream reads its rows by ROWID: the plan's choice,
        else `by_rowid`."""
        chosen = self.plan.agents_by_rowid
        return by_rowid(self._agent_count, self._total_count) if chosen is None else chosen

    def _load_projects(self) -> bool:
        """Refresh the workspace mapping, with Cursor 3.x projects over it; True on a change."""
        fingerprint, mapping = self._project_maps.get(workspace_storage_dir(self.db_path))
        changed = fingerprint != self._projects_fp
        if self._l3.projects:
            mapping = {**mapping, **self._l3.projects}
            changed = changed or mapping != self._projects
        self._projects_fp, self._projects = fingerprint, mapping
        return changed

    def _read_layout3(
        self,
        conn: sqlite3.Connection,
        probe: set[str] | Callable[[], set[str] | None] | None = None,
        *,
        scan_upto: int | None = None,
        json_aside: Callable[[], JsonRecords] | None = None,
        memo: BlobMemo | None = None,
        rowids_aside: Callable[[], dict[str, int]] | None = None,
        settled_before_ms: int | None = None,
        remember: bool = True,
    ) -> frozenset[int]:
        """The Cursor 3.x pass; returns the agent rows whose skipping changed. `probe`: the
        conversations whose bubble rows may have changed (None: any; a callable: asked once
        the pass needs it); `scan_upto`: a full
        parse's one pass over the blobs (see read_layout3)."""
        fingerprint, mapping = self._project_maps.get(workspace_storage_dir(self.db_path))
        before = self._l3.skip_rowids
        self._l3 = read_layout3(
            conn, self.db_path, mapping, self._l3, probe=probe, scan_upto=scan_upto,
            json_aside=json_aside, memo=memo, rowids_aside=rowids_aside,
            settled_before_ms=settled_before_ms, remember=remember, index_known=self._indexed(conn),
            fingerprint=fingerprint,
        )  # fmt: skip
        changed = self._l3.skip_changed
        return changed if changed is not None else before ^ self._l3.skip_rowids

    # -- conversations ----------------------------------------------------------------------

    def _install(self, composer: str, bubbles: list[Bubble], meta: tuple[Any, ...] | None) -> None:
        """(Re)build one conversation's calls from its kept bubbles."""
        conv = self._prepare(composer, bubbles, meta)
        if conv is not None:
            self._emit(conv)

    def _prepare(
        self, composer: str, bubbles: list[Bubble], meta: tuple[Any, ...] | None
    ) -> Conversation | None:
        """`_install` up to the calls, which need the agent stream: the conversation to emit
        (its `stream` still empty), or None when no bubble is kept (it has no calls)."""
        bubbles.sort(key=_ROWID_OF)  # ROWIDs are unique: the order of the whole tuples
        state = self._convs.setdefault(composer, ConvState())
        for request in state.requests:
            owners = self._request_conv.get(request)
            if owners is not None and composer in owners:
                owners.remove(composer)
                if not owners:
                    del self._request_conv[request]
        self._kept_total += len(bubbles) - len(state.kept)
        state.kept = array("q", map(_ROWID_OF, bubbles))
        state.requests = list(dict.fromkeys(filter(None, map(_REQUEST_OF, bubbles))))
        for request in state.requests:
            self._request_conv.setdefault(request, []).append(composer)
        state.newest_ms = max(map(_TS_OF, bubbles), default=0)
        state.skipped_gauge = False
        head = ComposerMeta.of(meta)
        name = head.name if head is not None else None
        state.title = name if isinstance(name, str) and name else None
        # Inferred dates are no turn times (docs/attribution.md): such a conversation matches by
        # id only.
        state.turns = () if state.inferred else bubble_turns(bubbles)
        if not bubbles:
            state.calls = []
            return None
        return Conversation(
            composer_id=composer,
            bubbles=bubbles,
            meta=head,
            stream=(),
            project=self._projects.get(composer, UNMAPPED_PROJECT),
            fallback_model=self._l3.models.get(composer),
        )

    def _emit(self, conv: Conversation) -> None:
        """The calls of a `_prepare`d conversation, with its requests of the agent stream."""
        state, streams = self._convs[conv.composer_id], self._walker.requests
        conv.stream = [streams[r] for r in state.requests if r in streams]
        calls = emit_conversation(conv)
        # A recent conversation is read again at every refresh: when nothing changed, its old
        # list stays (the same part, so nothing after the read looks at it again).
        if calls != state.calls:
            state.calls = calls
        state.skipped_gauge = skips_a_gauge(conv)

    # -- agent-stream-only requests ---------------------------------------------------------

    def _stream_call(self, request: StreamRequest, ts: int) -> Call | None:
        inp, out = request.input_tokens, request.output_tokens
        if not inp and not out:
            return None
        model = canonical_model(request.model)
        cost, priced = cost_of(model, inp, out)
        return Call(
            key=f"cursor:agentKv:{request.request_id}",
            provider=CURSOR,
            model=model,
            project=UNMAPPED_PROJECT,
            session=request.request_id,
            timestamp_ms=ts,
            input_tokens=inp,
            output_tokens=out,
            cost=cost,
            estimated=True,
            priced=priced,
            tools=tuple(request.tools),
            commands=tuple(request.commands),
        )

    def _rebuild_stream_calls(self, conn: sqlite3.Connection) -> None:
        """Requests that join no bubble of the database stand on their own, dated first-seen.

        Set operations pick them out of every request (not one by one, at every refresh),
        in the requests' order; a call whose request and date did not change is kept."""
        mtime = self._db_mtime_ms()
        requests, first_seen = self._walker.requests, self.first_seen
        # A walker only adds requests: those it had at the last rebuild are dated already.
        walker, dated = self._dated
        for request_id in itertools.islice(requests, dated if walker is self._walker else 0, None):
            first_seen.setdefault(request_id, mtime)
        self._dated = (self._walker, len(requests))
        conv, other, l3 = self._request_conv, self._other_requests, self._l3.request_ids
        alone = [r for r in requests if r not in conv and r not in other and r not in l3]
        candidates = [r for r in alone if first_seen[r] >= self.floor_ms]
        unchecked = [r for r in candidates if r not in self._checked_stream_only]
        if self._scan_lo and unchecked:
            self._other_requests |= scan.request_ids_below(conn, self._scan_lo, unchecked)
        self._checked_stream_only.update(unchecked)
        before = self._stream_made
        made: dict[str, tuple[StreamRequest, tuple[Any, ...], int, Call | None]] = {}
        calls: dict[str, Call] = {}
        for request_id in candidates:
            if request_id in self._other_requests:
                continue
            request, ts = requests[request_id], first_seen[request_id]
            signature = request.signature()
            kept = before.get(request_id)
            if kept is None or kept[0] is not request or kept[1] != signature or kept[2] != ts:
                kept = (request, signature, ts, self._stream_call(request, ts))
            made[request_id] = kept
            if kept[3] is not None:
                calls[request_id] = kept[3]
        self._stream_made = made
        old = self._stream_calls
        if len(calls) != len(old) or any(
            a is not b for a, b in zip(calls.values(), old.values(), strict=True)
        ):
            self._stream_calls = calls
            self._stream_part = list(calls.values())
