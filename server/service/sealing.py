"""The sealed days of the usage service: which days a read serves from the daily cache, which
it derives, and how it seals them (docs/caches.md#daily-cache); a base of `UsageReader`."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Final

from codeburn.cache import (
    FIRST_SEEN_FILE,
    DailyCache,
    DaySlices,
    ImportSnapshot,
    first_seen_lost,
    load_first_seen,
    update_daily,
)
from codeburn.providers import (
    LocalReader,
    Plan,
    local_day,
    local_midnight_ms,
)
from codeburn.server.service.derive import (
    Sealed,
    derive_days,
    import_marks,
    sealed_evidence,
)

log = logging.getLogger(__name__)

ONE_DAY: Final = timedelta(days=1)


class SealedDays:
    """The daily-cache side of a usage read; the reader's state is set by `UsageReader`."""

    cache_dir: Path
    db_key: str
    plan: Plan
    _local: LocalReader
    # the daily cache, its floor and what its sealed days hold for attribution
    _evidence: tuple[DailyCache, date, Sealed] | None

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
