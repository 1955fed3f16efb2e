"""The usage service: local estimates, imported and synced usage, caches → report figures.

One instance per Cursor database. The CLI makes one per run; the language server keeps one
alive so refreshes are incremental. All public methods are thread-safe.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from codeburn.cache import (
    Budget,
    cursor_sync_enabled,
    import_file,
    load_daily,
    remove_imported,
)
from codeburn.providers import (
    iso_utc,
    now_ms,
    six_month_floor,
    timezone_name,
    today,
)
from codeburn.server.service.alerts import DEFAULT_INCLUDED_PERCENT
from codeburn.server.service.cycle import current_cycle
from codeburn.server.service.forecast import HISTORY_DAYS, counted_until
from codeburn.server.service.periods import ALL_PERIOD, Period
from codeburn.server.service.reading import (
    SYNCED_PROVIDERS,
    NoCachedFigures,
    UsageReader,
)
from codeburn.server.service.report import build_report, build_status, providers_for

log = logging.getLogger(__name__)


class UsageService(UsageReader):
    """Answers period questions about one Cursor database and the import store."""

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
