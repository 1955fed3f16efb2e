"""The usage service: local estimates, imported and synced usage, caches → report figures.

One instance per Cursor database. The CLI makes one per run; the language server keeps one
alive so refreshes are incremental. All public methods are thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

from codeburn.cache import (
    FIRST_SEEN_FILE,
    Budget,
    CachedResults,
    DailyCache,
    DaySlices,
    ImportSnapshot,
    ImportStoreError,
    LocalFiles,
    cursor_sync_enabled,
    db_fingerprint,
    first_seen_lost,
    import_file,
    load_daily,
    load_first_seen,
    load_results,
    load_store,
    remove_imported,
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
    canonical,
    gc_paused,
    iso_utc,
    local_day,
    local_midnight_ms,
    now_ms,
    release_free_memory,
    six_month_floor,
    timezone_name,
    today,
)
from codeburn.server.service.alerts import DEFAULT_INCLUDED_PERCENT
from codeburn.server.service.cycle import current_cycle
from codeburn.server.service.derive import (
    Sealed,
    derive_days,
    import_marks,
    sealed_evidence,
    stale_days,
)
from codeburn.server.service.forecast import HISTORY_DAYS, counted_until
from codeburn.server.service.periods import ALL_PERIOD, Period
from codeburn.server.service.report import build_report, build_status, providers_for

log = logging.getLogger(__name__)

SYNCED_PROVIDERS: Final = frozenset({CURSOR, CURSOR_AGENT, GROKBOT, USER_API_KEY})
ONE_DAY: Final = timedelta(days=1)
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


class UsageService:
    """Answers period questions about one Cursor database and the import store."""

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
    ) -> tuple[list[Call], LocalState, bool]:
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
        made = self._made
        cached = made if made is not None else load_results(self.cache_dir, self.db_key)
        if cached and cached.fingerprint == fingerprint and cached.floor_ms <= floor_ms:
            return (*self._from_cache(cached, floor_ms), True)
        if cached_only:
            if cached is None:
                raise NoCachedFigures
            return (*self._from_cache(cached, floor_ms), False)
        try:
            read = self._local.read(floor_ms, snapshot, self.progress, held=held)
        except (DatabaseLockedError, DatabaseUnrecognizedError, CursorDbError) as exc:
            return self._last_good(cached, floor_ms, exc)
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
            calls=[c for c in calls if c.timestamp_ms >= keep_from],
            warnings=notes,
            unreadable=read.unreadable,
            diagnostics=read.diagnostics,
            # every id (an event of today may be of an older conversation), today's turns
            conversations=self._turns_since(read.conversations, keep_from - 60_000),
            paths=read.paths,
        )
        cache_dir = self.cache_dir

        def save() -> None:
            save_results(cache_dir, results)

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
    ) -> tuple[list[Call], LocalState, bool]:
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
            release_free_memory()
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
        return local

    def _sealed_evidence(self, daily: DailyCache, floor_day: date) -> Sealed:
        """`sealed_evidence` of the window's sealed days; a long-lived service keeps it while
        the daily cache is the same object (the file unchanged since the last refresh)."""
        kept = self._evidence
        if kept is not None and kept[0] is daily and kept[1] == floor_day:
            return kept[2]
        sealed = sealed_evidence(
            {d: s for d, s in daily.days.items() if d >= floor_day and daily.is_sealed(d)}
        )
        if self.plan.long_lived:
            self._evidence = (daily, floor_day, sealed)
        return sealed

    @staticmethod
    def _plan(
        daily: DailyCache, since: date, first: date, last: date, now_day: date, floor_day: date
    ) -> tuple[dict[date, DaySlices], list[date], list[date]]:
        """Sealed days served, the days to derive from a parse, and the days from stored events
        alone: those before the floor, and the history from `since` to `first` (never parsed)."""
        days: dict[date, DaySlices] = {}
        needed: list[date] = []
        stored_only: list[date] = []
        day = since
        while day <= last:
            if day < now_day and daily.is_sealed(day):
                days[day] = daily.day(day)
            elif day >= floor_day and day >= first:
                needed.append(day)
            else:
                stored_only.append(day)
            day += ONE_DAY
        return days, needed, stored_only

    def _oldest_tool_day(self, floor_day: date) -> date:
        """The day of other tools' oldest call before the floor (their logs are read whole,
        docs/other-tools.md), else the floor."""
        earlier = self._local.tool_calls(0, local_midnight_ms(floor_day))
        return min((local_day(c.timestamp_ms) for c in earlier), default=floor_day)

    def _before_floor(
        self, before: list[date], floor_day: date, snapshot: ImportSnapshot | None
    ) -> dict[date, DaySlices]:
        """Days before the floor: it limits the scan of Cursor's own files only, so stored
        exact events and other tools' logs (read whole) show for any period asked."""
        earlier = self._local.tool_calls(local_midnight_ms(before[0]), local_midnight_ms(floor_day))
        if not earlier and (snapshot is None or not snapshot.events):
            return {}
        stored = derive_days(before[0], before[-1], earlier, snapshot)
        return {day: stored.get(day, {}) for day in before}

    def _hold_first_seen(
        self, daily: DailyCache, zone: str, floor_day: date
    ) -> tuple[DailyCache, list[str]]:
        """A daily cache from before sealed days held their first-seen times takes them from
        the first-seen file now. When that file is lost too, the namespaces whose requests on
        sealed days cannot be dated: a read that dates any of them again says so."""
        if daily.watermark is None:
            return daily, []
        missing = [
            n for n in (self.db_key, self._local.agent.first_seen_key) if n not in daily.first_seen
        ]
        if not missing:
            return daily, []
        if first_seen_lost(self.cache_dir):
            return daily, missing
        before_ms = local_midnight_ms(daily.watermark + ONE_DAY)

        def change(cache: DailyCache) -> None:
            for namespace in missing:
                seen = load_first_seen(self.cache_dir, namespace)
                cache.remember_first_seen(namespace, seen, before_ms)

        daily = update_daily(
            self.cache_dir, timezone=zone, db_path=self.db_key, change=change, floor=floor_day
        )
        return daily, []

    @staticmethod
    def _undated_notice(daily: DailyCache) -> str:
        until = daily.watermark.isoformat() if daily.watermark is not None else "yesterday"
        return (
            f"the first-seen dates of agent requests ({FIRST_SEEN_FILE}) were lost: requests "
            f"without a date of their own first seen up to {until} are dated again from now "
            "(approximate) and may also be counted on their first day"
        )

    @staticmethod
    def _parse_start(daily: DailyCache, first_needed: date, floor_day: date) -> date:
        start = first_needed
        if (
            daily.watermark is not None
            and daily.sealed_from is not None
            and start > daily.watermark
        ):
            start = min(start, daily.watermark + ONE_DAY)
        return max(start, floor_day)

    def _seal(
        self,
        zone: str,
        first: date,
        last: date,
        derived: dict[date, DaySlices],
        snapshot: ImportSnapshot | None,
        paths: dict[str, str],
        again: Sequence[date] = (),
    ) -> None:
        """Seal [first, last] of `derived`; `again`: sealed days derived anew (their sealed
        slices give way)."""
        before_ms = local_midnight_ms(last + ONE_DAY)

        def change(cache: DailyCache) -> None:
            if cache.watermark is not None and first > cache.watermark + ONE_DAY:
                return  # another process moved the cache; keep contiguity, seal next time
            for day in again:  # the same stored events: their import marks stay
                cache.reseal(day, derived.get(day) or {})
            # A file without import marks gets those of its older sealed days too.
            mark_from = first if cache.imports is not None else (cache.sealed_from or first)
            cache.seal(first, last, derived, import_marks(min(mark_from, first), last, snapshot))
            for namespace in (self.db_key, self._local.agent.first_seen_key):
                seen = self._local.first_seen_of(namespace)
                cache.remember_first_seen(namespace, seen, before_ms)
            cache.remember_paths(paths)

        def write() -> None:
            update_daily(self.cache_dir, timezone=zone, db_path=self.db_key, change=change)

        # A CLI command seals once its answer is out (nothing after it reads the file).
        if not self.plan.after_answer(write):
            write()

    def invalidate(self, first: date, last: date) -> None:
        """An import, removal or sync changed [first, last]: re-derive those days."""
        with self._lock:
            update_daily(
                self.cache_dir,
                timezone=timezone_name(),
                db_path=self.db_key,
                change=lambda cache: cache.invalidate(first, last, SYNCED_PROVIDERS),
            )

    # -- answers ----------------------------------------------------------------------------

    def report(self, period: Period, *, provider: str = "all", sync: bool = True) -> dict[str, Any]:
        """The report object (docs/report-json.md) for a period."""
        if sync and providers_for(provider) & SYNCED_PROVIDERS:
            self.sync_if_due()
        collected = self.collect(period.start, period.end, oldest=period.label == ALL_PERIOD)
        if collected.first is not None and collected.first < period.start:
            period = Period(period.label, collected.first, period.end)
        notes = list(collected.local.warnings)
        if collected.local.message:
            notes.insert(0, collected.local.message)
        return build_report(
            collected.days,
            period,
            provider=provider,
            timezone=timezone_name(),
            snapshot=collected.snapshot,
            cursor_sync=self.cursor_sync_block(),
            warnings=notes,
            diagnostics=[*collected.local.diagnostics, *collected.diagnostics],
            paths=collected.paths,
        )

    def status(
        self,
        *,
        budget: Budget,
        quota: bool = False,
        sync: bool = True,
        cached_only: bool = False,
        budget_period: str = "month",
        known_quota: dict[str, Any] | None = None,
        included_percent: Sequence[float] = DEFAULT_INCLUDED_PERCENT,
        providers: frozenset[str] | None = None,
    ) -> dict[str, Any] | None:
        """The status object (docs/report-json.md): today, this month, the billing cycle and its
        forecast, of the tools in `providers` (the `codeburn.providers` setting; None: every
        tool).

        `cached_only` answers from the caches without parsing (a starting editor's first figures);
        None when nothing is cached for this database yet. `budget_period`: what the monthly
        budget counts, `month` or `cycle`; `known_quota`: a `status.quota` already read (the
        language server's), used when `quota` is false.
        """
        if sync and not cached_only:
            self.sync_if_due()
        now_day = today()
        quota_block = self.quota() if quota else known_quota
        cycle = current_cycle(now_day, quota_block)
        # The forecast's rates reach back before the cycle (docs/forecast.md): those days come
        # without a parse of Cursor's files (sealed, or stored events), so a status reads no
        # more of them than before.
        history = now_day - timedelta(days=HISTORY_DAYS - 1)
        first = min(now_day.replace(day=1), cycle.start)
        try:
            collected = self.collect(
                first,
                now_day,
                cached_only=cached_only,
                history_from=min(first, history),
                end_ms=counted_until(now_ms()),
            )
        except NoCachedFigures:
            return None
        return build_status(
            collected.days,
            today=now_day,
            state=collected.local.state,
            message=collected.local.message,
            budget=budget,
            quota=quota_block,
            cursor_sync=self.cursor_sync_block(),
            warnings=collected.local.warnings,
            unreadable=collected.local.unreadable,
            diagnostics=collected.local.diagnostics,
            paths=collected.paths,
            cycle=cycle,
            budget_period=budget_period,
            included_percent=included_percent,
            providers=providers,
        )

    # -- cursor.com -------------------------------------------------------------------------

    def sync_if_due(self, interval_ms: int | None = None) -> None:
        """Automatic sync before a read: silent on failure, keeps what is stored.
        `interval_ms`: the editor's schedule of quick syncs (docs/cursor-sync.md)."""
        if not cursor_sync_enabled():
            return  # off (maybe_sync would say so too): nothing of the sync to import
        from codeburn.sync import maybe_sync  # noqa: PLC0415 - httpx only when used

        try:
            outcome = maybe_sync(self.db_path, interval_ms=interval_ms)
        except Exception:  # an automatic sync must never break a report
            log.exception("automatic cursor.com sync failed")
            return
        if outcome.changed and outcome.covered_days is not None:
            self.invalidate(*outcome.covered_days)

    def sync_now(self) -> dict[str, Any]:
        """Forced sync (raises SyncError with a message a person can act on)."""
        from codeburn.sync import maybe_sync  # noqa: PLC0415

        outcome = maybe_sync(self.db_path, force=True)
        if outcome.changed and outcome.covered_days is not None:
            self.invalidate(*outcome.covered_days)
        return outcome.summary or {}

    def cursor_sync_block(self) -> dict[str, Any] | None:
        from codeburn.sync import cursor_sync_block  # noqa: PLC0415

        try:
            return cursor_sync_block(self.db_path)
        except Exception:
            log.exception("cursorSync block unavailable")
            return None

    def quota(self) -> dict[str, Any] | None:
        from codeburn.sync import read_quota  # noqa: PLC0415

        try:
            return read_quota(self.db_path)
        except Exception:
            log.exception("quota unavailable")
            return None

    # -- the import store -------------------------------------------------------------------

    def import_csv(
        self,
        path: Path,
        *,
        start: str | None = None,
        end: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        """Import a Cursor usage export (one person's rows of a team export); the covered days
        are re-derived."""
        from codeburn.providers import signed_in_email  # noqa: PLC0415

        signed_in = None if user else signed_in_email(self.db_path)
        summary = import_file(path, start=start, end=end, user=user, signed_in=signed_in)
        if summary.first_day is not None and summary.last_day is not None:
            self.invalidate(summary.first_day, summary.last_day)
        return summary.to_json()

    def remove_import(self) -> dict[str, Any]:
        """Delete the store; local estimates of every covered day come back."""
        result = remove_imported()
        days = [d for d in (result.first_day, result.last_day) if d is not None]
        with self._lock:
            # The sealed days' own marks: the store's ranges are unknown when it was unreadable.
            daily = load_daily(self.cache_dir, timezone=timezone_name(), db_path=self.db_key)
            marked = daily.imported_span(six_month_floor())
        if marked is not None:
            days.extend(marked)
        if days:
            self.invalidate(min(days), max(days))
        return {
            "removed": result.existed,
            "ranges": [
                {"start": iso_utc(r.start_ms), "end": iso_utc(r.end_ms), "source": r.source}
                for r in result.ranges
            ],
        }

    def describe(self) -> dict[str, Any]:
        return {"dbPath": self.db_key, "cacheDir": str(self.cache_dir)}
