"""The usage service: local estimates, imported and synced usage, caches → report figures.

One instance per Cursor database. The CLI makes one per run; the language server keeps one
alive so refreshes are incremental. All public methods are thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

from codeburn.cache import import_store
from codeburn.cache.config import Budget
from codeburn.cache.daily_cache import DailyCache, load_daily, update_daily
from codeburn.cache.dirs import cache_dir as default_cache_dir
from codeburn.cache.first_seen import load_first_seen, save_first_seen
from codeburn.cache.import_store import ImportSnapshot, ImportStoreError
from codeburn.cache.leftovers import sweep_once
from codeburn.cache.results_cache import (
    CachedResults,
    db_fingerprint,
    load_results,
    save_results,
    sweep_old_versions,
)
from codeburn.cache.usage_slices import DaySlices
from codeburn.providers.calls import CURSOR, CURSOR_AGENT, GROKBOT, USER_API_KEY, Call
from codeburn.providers.cursor_paths import canonical, workspace_storage_dir
from codeburn.providers.cursor_reader import CursorReader, ReadResult
from codeburn.providers.cursor_rows import gc_paused
from codeburn.providers.localtime import (
    iso_utc,
    local_midnight_ms,
    six_month_floor,
    timezone_name,
    today,
)
from codeburn.providers.sqlite_ro import (
    CursorDbError,
    DatabaseLockedError,
    DatabaseMissingError,
    DatabaseUnrecognizedError,
)
from codeburn.providers.workspaces import storage_fingerprint
from codeburn.server.agent_side import AgentSide, local_notices
from codeburn.server.derive import derive_days
from codeburn.server.periods import Period
from codeburn.server.report import build_report, build_status, providers_for

log = logging.getLogger(__name__)

SYNCED_PROVIDERS: Final = frozenset({CURSOR, CURSOR_AGENT, GROKBOT, USER_API_KEY})
ONE_DAY: Final = timedelta(days=1)
AGENT_ONLY: Final = "showing agent transcripts and Cursor Agent CLI sessions only"
Progress = Callable[[int, int], None]


class NoCachedFigures(Exception):
    """A cached-only answer was asked for, but nothing is cached for this database yet."""


@dataclass(slots=True)
class LocalState:
    """How the last read of Cursor's database went (SPEC §8 `state`)."""

    state: str = "ok"
    message: str | None = None
    warnings: list[str] = field(default_factory=list)
    unreadable: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Collected:
    days: dict[date, DaySlices]
    local: LocalState
    snapshot: ImportSnapshot | None


class UsageService:
    """Answers period questions about one Cursor database and the import store."""

    def __init__(
        self,
        db_path: Path,
        *,
        cache_dir: Path | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.db_path = canonical(db_path)
        self.db_key = str(self.db_path)
        self.cache_dir = cache_dir or default_cache_dir()
        sweep_once()  # what a killed process left: db snapshots, temp files
        self.progress = progress
        self._lock = threading.RLock()
        self._reader: CursorReader | None = None
        self._agent = AgentSide(self.cache_dir)
        self._seen_saved: dict[str, int] | None = None
        self.local = LocalState()

    # -- inputs -----------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """Changes whenever a figure could: database, WAL, workspaces, transcripts, CLI stores,
        import store."""
        store = import_store.fingerprint()
        workspaces = storage_fingerprint(workspace_storage_dir(self.db_path))
        agent = self._agent.snapshot().fingerprint
        return db_fingerprint(self.db_path, f"{workspaces}|{agent}|{store}")

    def _no_data(self, detail: str = "") -> LocalState:
        return LocalState("no-data", f"No Cursor data found at {self.db_path}{detail}")

    def _snapshot(self) -> tuple[ImportSnapshot | None, str | None]:
        try:
            return import_store.load(), None
        except ImportStoreError as exc:
            return None, str(exc)

    def _read_local(
        self, floor_ms: int, *, cached_only: bool = False
    ) -> tuple[list[Call], LocalState, bool]:
        """Local calls at or after `floor_ms`, the read state, and whether they may be sealed.

        `cached_only` answers from the results cache even when it is stale (never parses), so a
        starting editor shows figures at once and refines them right after.
        """
        snapshot = self._agent.snapshot()
        db_exists = self.db_path.is_file()
        if not db_exists and not snapshot.idents:
            return [], self._no_data(), True
        workspaces = storage_fingerprint(workspace_storage_dir(self.db_path))
        fingerprint = db_fingerprint(self.db_path, f"{workspaces}|{snapshot.fingerprint}")
        cached = load_results(self.cache_dir, self.db_key)
        if cached and cached.fingerprint == fingerprint and cached.floor_ms <= floor_ms:
            return (*self._from_cache(cached, floor_ms), True)
        if cached_only:
            if cached is None:
                raise NoCachedFigures
            return (*self._from_cache(cached, floor_ms), False)
        result: ReadResult | None = None
        missing = ""
        beside = self._agent.read_beside(snapshot) if db_exists else None
        try:
            if db_exists:
                try:
                    result = self._reader_for(floor_ms).read(self.progress)
                except DatabaseMissingError as exc:
                    missing = f": {exc}"
                except (DatabaseLockedError, DatabaseUnrecognizedError, CursorDbError) as exc:
                    return self._last_good(cached, floor_ms, exc)
                else:
                    self._save_first_seen(result.first_seen)
            agent = beside.result() if beside is not None else self._agent.read(snapshot)
        finally:
            if beside is not None:
                beside.cancel()
        if result is None and not agent.has_data:
            return [], self._no_data(missing), True
        combined = self._agent.combine(result, agent)
        calls = [c for c in combined.calls if c.timestamp_ms >= floor_ms]
        notes = local_notices(result, combined.unreadable)
        if result is None:
            notes.insert(0, f"No Cursor database found at {self.db_path}; {AGENT_ONLY}")
        local = LocalState("ok", None, notes, combined.unreadable)
        if agent.busy:
            return calls, local, False  # a locked CLI store: nothing cached, nothing sealed
        keep_from = local_midnight_ms(today())
        save_results(
            self.cache_dir,
            CachedResults(
                db_path=self.db_key,
                fingerprint=fingerprint,
                floor_ms=max(floor_ms, keep_from),
                calls=[c for c in calls if c.timestamp_ms >= keep_from],
                warnings=notes,
                unreadable=combined.unreadable,
            ),
        )
        sweep_old_versions(self.cache_dir)
        return calls, local, True

    def _save_first_seen(self, seen: dict[str, int]) -> None:
        # Unchanged since this service saved it: the file holds these times or earlier ones.
        if seen != self._seen_saved:
            save_first_seen(self.cache_dir, self.db_key, seen)
            self._seen_saved = seen

    @staticmethod
    def _from_cache(cached: CachedResults, floor_ms: int) -> tuple[list[Call], LocalState]:
        calls = [c for c in cached.calls if c.timestamp_ms >= floor_ms]
        return calls, LocalState("ok", None, cached.warnings, cached.unreadable)

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
            return self._from_cache(cached, floor_ms)[0], state, False
        return [], state, False

    def _reader_for(self, floor_ms: int) -> CursorReader:
        reader = self._reader
        if reader is None or reader.floor_ms > floor_ms:
            first_seen = load_first_seen(self.cache_dir, self.db_key)
            reader = CursorReader(self.db_path, floor_ms=floor_ms, first_seen=first_seen)
            self._reader = reader
        return reader

    # -- days -------------------------------------------------------------------------------

    def collect(self, first: date, last: date, *, cached_only: bool = False) -> Collected:
        """Slices for every day in [first, last]: sealed days from the cache, others derived.

        Without cyclic GC: a refresh builds short-lived lists of every call (and caches' JSON)
        next to a long-lived reader, and the collections it set off cost it 20-80 ms.
        """
        with self._lock, gc_paused():
            return self._collect(first, last, cached_only)

    def _collect(self, first: date, last: date, cached_only: bool = False) -> Collected:
        now_day = today()
        last = min(last, now_day)
        floor_day = six_month_floor(now_day)
        zone = timezone_name()
        daily = load_daily(self.cache_dir, timezone=zone, db_path=self.db_key, floor=floor_day)
        snapshot, store_error = self._snapshot()
        days: dict[date, DaySlices] = {}
        needed: list[date] = []
        before_floor: list[date] = []
        day = first
        while day <= last:
            if daily.is_sealed(day):
                days[day] = daily.day(day)
            elif day >= floor_day:
                needed.append(day)
            else:
                before_floor.append(day)
            day += ONE_DAY
        if before_floor and snapshot is not None and snapshot.events:
            # The floor limits the scan of Cursor's database only: stored exact events show
            # for any period asked.
            stored = derive_days(before_floor[0], before_floor[-1], (), snapshot)
            for day in before_floor:
                days[day] = stored.get(day, {})
        local = LocalState()
        if needed:
            parse_from = self._parse_start(daily, needed[0], floor_day)
            calls, local, sealable = self._read_local(
                local_midnight_ms(parse_from), cached_only=cached_only
            )
            derived = derive_days(parse_from, now_day, calls, snapshot)
            for day in needed:
                days[day] = derived.get(day, {})
            if sealable and store_error is None and parse_from < now_day:
                self._seal(zone, parse_from, now_day - ONE_DAY, derived)
        elif not self.db_path.is_file() and not self._agent.snapshot().idents:
            local = self._no_data()
        if local.state == "no-data" and snapshot is not None and snapshot.events:
            # Imported or synced usage is data: show it, and say what is missing.
            local = LocalState("ok", None, [f"{local.message}; showing imported usage only"])
        if store_error is not None and local.state == "ok":
            local = LocalState("error", store_error, local.warnings)
        self.local = local
        return Collected(days, local, snapshot)

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

    def _seal(self, zone: str, first: date, last: date, derived: dict[date, DaySlices]) -> None:
        def change(cache: DailyCache) -> None:
            if cache.watermark is not None and first > cache.watermark + ONE_DAY:
                return  # another process moved the cache; keep contiguity, seal next time
            cache.seal(first, last, derived)

        update_daily(self.cache_dir, timezone=zone, db_path=self.db_key, change=change)

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
        """The SPEC §8 report object for a period."""
        if sync and providers_for(provider) & SYNCED_PROVIDERS:
            self.sync_if_due()
        collected = self.collect(period.start, period.end)
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
        )

    def status(
        self,
        *,
        budget: Budget,
        quota: bool = False,
        sync: bool = True,
        cached_only: bool = False,
    ) -> dict[str, Any] | None:
        """The SPEC §8 status object (today and this month).

        `cached_only` answers from the caches without parsing (a starting editor's first figures);
        None when nothing is cached for this database yet.
        """
        if sync and not cached_only:
            self.sync_if_due()
        now_day = today()
        try:
            collected = self.collect(now_day.replace(day=1), now_day, cached_only=cached_only)
        except NoCachedFigures:
            return None
        return build_status(
            collected.days,
            today=now_day,
            state=collected.local.state,
            message=collected.local.message,
            budget=budget,
            quota=self.quota() if quota else None,
            cursor_sync=self.cursor_sync_block(),
            warnings=collected.local.warnings,
            unreadable=collected.local.unreadable,
        )

    # -- cursor.com -------------------------------------------------------------------------

    def sync_if_due(self) -> None:
        """Automatic sync before a read: silent on failure, keeps what is stored."""
        from codeburn.sync.cursor_sync import maybe_sync  # noqa: PLC0415 - httpx only when used

        try:
            outcome = maybe_sync(self.db_path)
        except Exception:  # an automatic sync must never break a report
            log.exception("automatic cursor.com sync failed")
            return
        if outcome.changed and outcome.covered_days is not None:
            self.invalidate(*outcome.covered_days)

    def sync_now(self) -> dict[str, Any]:
        """Forced sync (raises SyncError with a message a person can act on)."""
        from codeburn.sync.cursor_sync import maybe_sync  # noqa: PLC0415

        outcome = maybe_sync(self.db_path, force=True)
        if outcome.changed and outcome.covered_days is not None:
            self.invalidate(*outcome.covered_days)
        return outcome.summary or {}

    def cursor_sync_block(self) -> dict[str, Any] | None:
        from codeburn.sync.status_block import cursor_sync_block  # noqa: PLC0415

        try:
            return cursor_sync_block(self.db_path)
        except Exception:
            log.exception("cursorSync block unavailable")
            return None

    def quota(self) -> dict[str, Any] | None:
        from codeburn.sync.quota import read_quota  # noqa: PLC0415

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
        from codeburn.providers.cursor_auth import signed_in_email  # noqa: PLC0415

        signed_in = None if user else signed_in_email(self.db_path)
        summary = import_store.import_file(
            path, start=start, end=end, user=user, signed_in=signed_in
        )
        if summary.first_day is not None and summary.last_day is not None:
            self.invalidate(summary.first_day, summary.last_day)
        return summary.to_json()

    def remove_import(self) -> dict[str, Any]:
        """Delete the store; local estimates of every covered day come back."""
        result = import_store.remove()
        if result.first_day is not None and result.last_day is not None:
            self.invalidate(result.first_day, result.last_day)
        return {
            "removed": result.existed,
            "ranges": [
                {"start": iso_utc(r.start_ms), "end": iso_utc(r.end_ms), "source": r.source}
                for r in result.ranges
            ],
        }

    def describe(self) -> dict[str, Any]:
        return {"dbPath": self.db_key, "cacheDir": str(self.cache_dir)}
