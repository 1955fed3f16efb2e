"""Reading one Cursor database, the Cursor home, the other tools' logs and the import store into
days of figures: what the usage service answers from (`UsageService` builds on `UsageReader`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Final

from codeburn.cache import (
    CachedResults,
    DailyCache,
    DaySlices,
    ImportSnapshot,
    ImportStoreError,
    LocalFiles,
    db_fingerprint,
    load_daily,
    load_results,
    load_store,
    save_results,
    store_fingerprint,
    sweep_old_versions,
    sweep_once,
    update_daily,
)
from codeburn.cache import cache_dir as default_cache_dir
from codeburn.providers import (
    CURSOR,
    CURSOR_AGENT,
    GROKBOT,
    LONG_LIVED,
    USER_API_KEY,
    Call,
    CursorDbError,
    DatabaseLockedError,
    DatabaseUnrecognizedError,
    LocalConversation,
    LocalReader,
    Plan,
    calls_since,
    canonical,
    gc_paused,
    local_day,
    local_midnight_ms,
    release_free_memory,
    six_month_floor,
    timezone_name,
    today,
)
from codeburn.server.service.derive import (
    Sealed,
    derive_days,
    stale_days,
)
from codeburn.server.service.sealing import ONE_DAY, SealedDays

log = logging.getLogger(__name__)
SYNCED_PROVIDERS: Final = frozenset({CURSOR, CURSOR_AGENT, GROKBOT, USER_API_KEY})
Progress = Callable[[int, int], None]


class NoCachedFigures(Exception):
    """A cached-only answer was asked for, but nothing is cached for this database yet."""


@dataclass(slots=True)
class LocalState:
    """How the last read of Cursor's database went (docs/report-json.md#status, `state`)."""

    state: str = "ok"
    message: str | None = None
    warnings: list[str] = field(default_factory=list)
    unreadable: dict[str, int] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)  # facts, not warnings (docs/cli.md)
    # the local conversations exact events are attributed to; None: not known (not read)
    conversations: Mapping[str, LocalConversation] | None = None
    paths: dict[str, str] = field(default_factory=dict)  # project slug → its folder


@dataclass(slots=True)
class Collected:
    days: dict[date, DaySlices]
    local: LocalState
    snapshot: ImportSnapshot | None
    diagnostics: list[str] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)  # project slug → its folder
    first: date | None = None  # the first day collected (`oldest`: the oldest day held)


def oldest_held(daily: DailyCache, snapshot: ImportSnapshot | None, floor_day: date) -> date:
    """The oldest local day CodeBurn holds of Cursor's usage (docs/report-json.md, period `all`):
    its sealed days and the ranges of imported or synced usage (every stored event lies in one),
    and at the latest the floor of Cursor's local files. Other tools' logs: `_oldest_tool_day`."""
    oldest = floor_day
    if daily.sealed_from is not None and daily.watermark is not None:
        oldest = min(oldest, daily.sealed_from)
    for held in snapshot.ranges if snapshot is not None else ():
        oldest = min(oldest, local_day(held.start_ms))
    return oldest


class UsageReader(SealedDays):
    """Collects days of figures for one Cursor database and the import store."""

    def __init__(
        self,
        db_path: Path,
        *,
        cache_dir: Path | None = None,
        progress: Progress | None = None,
        plan: Plan = LONG_LIVED,
    ) -> None:
        """`plan`: how reads run (`providers.plan`), chosen by the entry point: the CLI's
        one-shot plan keeps nothing of a read for an incremental refresh (see `LocalReader`),
        which lowers the command's peak memory."""
        self.db_path = canonical(db_path)
        self.db_key = str(self.db_path)
        self.cache_dir = cache_dir or default_cache_dir()
        sweep_once()  # what a killed process left: db snapshots, temp files
        self.progress = progress
        self._lock = threading.RLock()
        self.plan = plan
        self._local = LocalReader(self.db_path, LocalFiles(self.cache_dir), plan=plan)
        self.local = LocalState()
        # conversation id → (the conversation, a time, its turns since then) of the last save
        self._since: dict[str, tuple[LocalConversation, int, LocalConversation]] = {}
        self._made: CachedResults | None = None  # the last results saved (or queued to be)
        # the daily cache, its floor and what its sealed days hold for attribution
        self._evidence: tuple[DailyCache, date, Sealed] | None = None

    # -- inputs -----------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """Changes whenever a figure could: database, WAL, workspaces, transcripts, CLI stores,
        import store."""
        store = store_fingerprint()
        with self._lock:
            try:
                sources = self._local.sources_fingerprint(self._local.snapshot())
            finally:
                self._local.refreshed()
        return db_fingerprint(self.db_path, f"{sources}|{store}")

    def watch_tool_logs(self, on: bool) -> None:
        """Whether a file watch reports every change to the other tools' logs (the language
        server's editor does: docs/lsp.md#file-watch)."""
        self._local.watch_tool_logs(on)

    def tool_logs_changed(self, paths: Iterable[str] | None) -> None:
        """The paths the file watch reports written, created or removed; None: not known
        (every root is listed again at the next read)."""
        self._local.tool_logs_changed(paths)

    def _no_data(self, detail: str = "") -> LocalState:
        # Nothing local at all: no event can be this machine's.
        message = f"No Cursor data found at {self.db_path}{detail}"
        return LocalState("no-data", message, conversations={})

    def _snapshot(self) -> tuple[ImportSnapshot | None, str | None]:
        try:
            return load_store(), None
        except ImportStoreError as exc:
            return None, str(exc)

    def _read_local(
        self,
        floor_ms: int,
        *,
        cached_only: bool = False,
        held: dict[str, dict[str, int]] | None = None,
    ) -> tuple[Sequence[Call], LocalState, bool]:
        """Local calls at or after `floor_ms`, the read state, and whether they may be sealed.

        `cached_only` answers from the results cache even when it is stale (never parses), so a
        starting editor shows figures at once and refines them right after. `held`: the
        first-seen times sealed days hold, per namespace (see `DailyCache.first_seen`).
        """
        snapshot = self._local.snapshot()
        if not self._local.has_sources(snapshot):
            return [], self._no_data(), True
        fingerprint = db_fingerprint(self.db_path, self._local.sources_fingerprint(snapshot))
        # This service's own last results first: the file may still be queued to be written
        # behind the answer (`Plan.save`), and they are what a failed read keeps showing
        # (`_last_good`).
        # A file of another fingerprint is parsed only when its figures are shown after all.
        made = self._made
        cached = made or load_results(self.cache_dir, self.db_key, fingerprint)
        if cached and cached.fingerprint == fingerprint and cached.floor_ms <= floor_ms:
            return (*self._from_cache(cached, floor_ms), True)
        if cached_only:
            cached = cached or load_results(self.cache_dir, self.db_key)
            if cached is None:
                raise NoCachedFigures
            return (*self._from_cache(cached, floor_ms), False)
        try:
            read = self._local.read(floor_ms, snapshot, self.progress, held=held)
        except (DatabaseLockedError, DatabaseUnrecognizedError, CursorDbError) as exc:
            return self._last_good(
                cached or load_results(self.cache_dir, self.db_key), floor_ms, exc
            )
        if read.no_data is not None:
            return [], self._no_data(read.no_data), True
        calls, notes = read.calls, read.notes
        local = LocalState(
            "ok",
            None,
            notes,
            read.unreadable,
            read.diagnostics,
            read.conversations,
            read.paths,
        )
        if read.busy:
            return calls, local, False  # a locked CLI store: nothing cached, nothing sealed
        keep_from = local_midnight_ms(today())
        results = CachedResults(
            db_path=self.db_key,
            fingerprint=fingerprint,
            floor_ms=max(floor_ms, keep_from),
            calls=calls_since(calls, keep_from),
            warnings=notes,
            unreadable=read.unreadable,
            diagnostics=read.diagnostics,
            # every id (an event of today may be of an older conversation), today's turns
            conversations=self._turns_since(read.conversations, keep_from - 60_000),
            paths=read.paths,
        )
        cache_dir, again = self.cache_dir, self.plan.long_lived

        def save() -> None:
            save_results(cache_dir, results, again=again)

        self.plan.save(f"results {cache_dir}", save)
        if self.plan.long_lived:
            self._made = results
        sweep_old_versions(self.cache_dir)
        return calls, local, True

    def _turns_since(
        self, conversations: Mapping[str, LocalConversation], ms: int
    ) -> dict[str, LocalConversation]:
        """Each conversation with its turns since `ms`, the same object as the last save's
        while the conversation is (`ConversationMemo` keeps unchanged ones): the results
        cache then encodes only what changed."""
        before = self._since
        kept: dict[str, tuple[LocalConversation, int, LocalConversation]] = {}
        for cid, conv in conversations.items():
            last = before.get(cid)
            if last is None or last[0] is not conv or last[1] != ms:
                last = (conv, ms, conv.turns_since(ms))
            kept[cid] = last
        self._since = kept
        return {cid: k[2] for cid, k in kept.items()}

    @staticmethod
    def _from_cache(cached: CachedResults, floor_ms: int) -> tuple[list[Call], LocalState]:
        calls = [c for c in cached.calls if c.timestamp_ms >= floor_ms]
        state = LocalState(
            "ok",
            None,
            cached.warnings,
            cached.unreadable,
            cached.diagnostics,
            cached.conversations,
            cached.paths,
        )
        return calls, state

    def _last_good(
        self, cached: CachedResults | None, floor_ms: int, exc: CursorDbError
    ) -> tuple[Sequence[Call], LocalState, bool]:
        if isinstance(exc, DatabaseLockedError):
            state = LocalState("db-locked", "Cursor database busy, retrying")
        elif isinstance(exc, DatabaseUnrecognizedError):
            state = LocalState("db-unrecognized", str(exc))
        else:
            state = LocalState("error", str(exc))
        log.warning("reading %s failed: %s", self.db_path, state.message)
        if cached is not None:
            state.unreadable = cached.unreadable
            state.diagnostics = cached.diagnostics
            state.conversations = cached.conversations
            state.paths = cached.paths
            return self._from_cache(cached, floor_ms)[0], state, False
        return [], state, False

    # -- days -------------------------------------------------------------------------------

    def collect(
        self,
        first: date,
        last: date,
        *,
        cached_only: bool = False,
        oldest: bool = False,
        history_from: date | None = None,
        end_ms: int | None = None,
    ) -> Collected:
        """Slices for every day in [first, last]: sealed days from the cache, others derived.
        `oldest`: from the oldest day held instead, when that is before `first`. `end_ms`: calls
        from then on count on no day (today's derived slices only; sealed days are before it).

        `history_from`: also the days from it to `first` as far as they cost no parse of Cursor's
        files: sealed days, else the stored (imported and synced) events alone.

        Without cyclic GC: a refresh builds short-lived lists of every call (and caches' JSON)
        next to a long-lived reader, and the collections it would set off find little to free.
        """
        with self._lock, gc_paused(freeze=True):
            try:
                collected = self._collect(first, last, cached_only, oldest, history_from, end_ms)
            finally:
                self._local.refreshed()
        if self.plan.long_lived:  # a long-lived service: its resident memory is not the peak's
            self.plan.behind("free memory", release_free_memory)
        return collected

    def _collect(
        self,
        first: date,
        last: date,
        cached_only: bool = False,
        oldest: bool = False,
        history_from: date | None = None,
        end_ms: int | None = None,
    ) -> Collected:
        now_day = today()
        last = min(last, now_day)
        floor_day = six_month_floor(now_day)
        zone = timezone_name()
        daily = load_daily(self.cache_dir, timezone=zone, db_path=self.db_key, floor=floor_day)
        if daily.watermark is not None and daily.watermark >= now_day:
            # Sealed by a run whose clock was ahead: from today on, nothing is sealed.
            daily = update_daily(
                self.cache_dir,
                timezone=zone,
                db_path=self.db_key,
                change=lambda cache: cache.forget_from(now_day),
                floor=floor_day,
            )
        daily, lost = self._hold_first_seen(daily, zone, floor_day)
        snapshot, store_error = self._snapshot()
        if oldest:
            first = min(
                first, oldest_held(daily, snapshot, floor_day), self._oldest_tool_day(floor_day)
            )
        since = first if history_from is None else min(history_from, first)
        days, needed, before_floor = self._plan(daily, since, first, last, now_day, floor_day)
        if before_floor:
            # The floor limits the scan of Cursor's database only: stored exact events and
            # other tools' logs show for any period asked.
            stored = self._before_floor(before_floor, floor_day, snapshot)
            days.update((day, daily.with_retired(day, slices)) for day, slices in stored.items())
        local = LocalState()
        diagnostics: list[str] = []
        if needed:
            local = self._derive(
                daily,
                days,
                needed,
                snapshot,
                store_error is None,
                cached_only,
                diagnostics,
                now_day,
                end_ms,
            )
        elif not self._local.has_sources(self._local.snapshot()):
            local = self._no_data()
        if local.state == "no-data" and snapshot is not None and snapshot.events:
            # Imported or synced usage is data: show it, and say what is missing.
            local = LocalState(
                "ok",
                None,
                [f"{local.message}; showing imported usage only"],
                {},
                local.diagnostics,
                conversations={},
            )
        if needed and any(self._local.first_seen_of(n) for n in lost):
            local.warnings = [*local.warnings, self._undated_notice(daily)]
        if store_error is not None and local.state == "ok":
            local = LocalState(
                "error", store_error, local.warnings, local.unreadable, local.diagnostics
            )
        self.local = local
        return Collected(days, local, snapshot, diagnostics, {**daily.paths, **local.paths}, first)

    def _derive(
        self,
        daily: DailyCache,
        days: dict[date, DaySlices],
        needed: list[date],
        snapshot: ImportSnapshot | None,
        store_ok: bool,
        cached_only: bool,
        diagnostics: list[str],
        now_day: date,
        end_ms: int | None,
    ) -> LocalState:
        """The `needed` days (and the sealed days the evidence now contradicts) into `days`,
        from a read of Cursor's files; seals what may be. Attribution is decided over the whole
        window, not the period asked (docs/attribution.md): the conversations sealed days hold
        count with those read, and a sealed day the evidence now contradicts is derived again."""
        floor_day = six_month_floor(now_day)
        parse_from = self._parse_start(daily, needed[0], floor_day)
        stored = snapshot is not None and bool(snapshot.events)
        sealed = self._sealed_evidence(daily, floor_day) if stored else Sealed()
        held = sealed.conversations
        for retry in (False, True):
            calls, local, sealable = self._read_local(
                local_midnight_ms(parse_from), cached_only=cached_only, held=daily.first_seen
            )
            known = None if local.conversations is None else {**held, **local.conversations}
            diagnostics.clear()
            derived = derive_days(
                parse_from,
                now_day,
                calls,
                snapshot,
                known,
                diagnostics,
                window_from=floor_day,
                end_ms=end_ms,
            )
            stale = stale_days(sealed, snapshot, known, (floor_day, now_day))
            if retry or not stale or stale[0] >= parse_from or cached_only:
                break
            parse_from = stale[0]  # the evidence changed: read back to the first such day
        again = [d for d in stale if d >= parse_from]
        for day in [*needed, *(d for d in again if d in days)]:
            days[day] = daily.with_retired(day, derived.get(day, {}))
        if sealable and store_ok and parse_from < now_day:
            zone = timezone_name()
            self._seal(zone, parse_from, now_day - ONE_DAY, derived, snapshot, local.paths, again)
            self._local.prepare_tools(local_midnight_ms(now_day))  # the next reads start today
        return local

    def invalidate(self, first: date, last: date) -> None:
        """An import, removal or sync changed [first, last]: re-derive those days."""
        with self._lock:
            update_daily(
                self.cache_dir,
                timezone=timezone_name(),
                db_path=self.db_key,
                change=lambda cache: cache.invalidate(first, last, SYNCED_PROVIDERS),
            )
