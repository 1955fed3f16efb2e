"""Sealed days: per local day and provider, everything a report needs (docs/caches.md#daily-cache).

Version 2: Cursor 3.x conversations are read (issue 8), so days sealed by a version 1 reader may
hold wrong figures. A v1 file is migrated once: its sealed days before the 6-month floor are kept
(their source aged out of every scan, only this file still knows them), the days from the floor on
are dropped and re-derived. The v1 file itself is swept later with our other old versions.
Version 3: the rules of issue 16 (served model, tool output, undated and inline messages) change
past figures; a v2 file is migrated the same way.
Version 4: exact events are attributed to local conversations, and slices keep per-conversation
sums and the attribution split (issue 17); a v3 (or older) file is migrated the same way.
Version 5: totals keep Cursor's token fee (`cursorFee`, issue 38), which a v4 day sealed with
synced usage-based events lacks; a v4 (or older) file is migrated the same way.

The version is the file's layout; what the days hold depends on the rules that derived them,
whose identity (`providers.rules.RULES`) the file carries. A file of other rules is renewed
once: sealed days before the 6-month floor stay, the days from the floor on are derived again,
and until then their old slices are kept aside ("retired") for the one case a new derivation
cannot answer: a slice whose source is gone (docs/caches.md#rules-identity).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

from codeburn.cache.files import FileMemo, loads_json, locked, read_json, write_cache_json
from codeburn.cache.usage_slices import DaySlices, Slice
from codeburn.providers import RULES, six_month_floor

# 2: Cursor 3.x conversations (issue 8); 3: real-file rules (issue 16); 4: attribution (17);
# 5: the token fee in totals (38)
VERSION: Final = 5
FILE: Final = f"daily.v{VERSION}.json"
V1: Final = 1
V1_FILE: Final = f"daily.v{V1}.json"
# Older versions migrated once, newest first: v3 → v4 like v1 → v2 (each changed the rules).
OLDER: Final = (4, 3, 2, V1)
ONE_DAY = timedelta(days=1)


@dataclass(slots=True)
class DailyCache:
    """Days in [sealed_from, watermark] are sealed; a missing day in that range had no usage.

    `imports`: per sealed day, the providers whose slices hold imported or synced figures or
    gave way to an import's coverage, so `--remove` cleans them with the store unreadable (None:
    a file written before this was recorded). `first_seen`: per first-seen namespace, the
    first-seen times that date requests on sealed days, so a lost first-seen file never dates
    them again. `paths`: project slug → the folder it names, for the projects of sealed days
    (a report of sealed days only reads no source, and the slug cannot tell `/` from `-`); a
    file written before it was kept has none (those projects show as their slug until sealed
    again), which is why no version bump is needed.
    """

    timezone: str
    db_path: str
    sealed_from: date | None = None
    watermark: date | None = None
    days: dict[date, DaySlices] = field(default_factory=dict)
    imports: dict[date, list[str]] | None = field(default_factory=dict)
    first_seen: dict[str, dict[str, int]] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    rules: str | None = RULES
    # Slices sealed under other rules, for days not sealed again since (see `with_retired`).
    retired: dict[date, DaySlices] = field(default_factory=dict)

    def is_sealed(self, day: date) -> bool:
        return (
            self.sealed_from is not None
            and self.watermark is not None
            and self.sealed_from <= day <= self.watermark
        )

    def day(self, day: date) -> DaySlices:
        return self.days.get(day, {})

    def with_retired(self, day: date, derived: DaySlices) -> DaySlices:
        """A day's slices as derived now, plus each retired slice of that day the derivation
        found nothing for: its source is gone (a deleted log, a removed store), and only the
        figures sealed under the old rules still know it."""
        retired = self.retired.get(day)
        if not retired:
            return derived
        kept = {p: s for p, s in retired.items() if s.totals.calls and p not in derived}
        return {**derived, **kept} if kept else derived

    def renew(self, floor: date) -> None:
        """Adopt today's rules: the sealed days from `floor` on are retired, to be derived again."""
        sealed = {d: s for d, s in self.days.items() if d >= floor and self.is_sealed(d)}
        self.retired = {d: s for d, s in {**self.retired, **sealed}.items() if d >= floor}
        self.keep_before(floor)
        self.rules = RULES

    def seal(
        self,
        first: date,
        last: date,
        derived: dict[date, DaySlices],
        imports: dict[date, list[str]] | None = None,
    ) -> None:
        """Seal [first, last] next to the sealed range (or instead of it); sealed days stay.

        `imports`: the import marks of the days sealed now (and, for a file without marks, of
        the days sealed before)."""
        if last < first:
            return
        imports = imports or {}
        if self.imports is None:
            self.imports = {d: m for d, m in imports.items() if self.is_sealed(d)}
        already = {d for d in self.days if self.is_sealed(d)}
        contiguous = (
            self.sealed_from is not None
            and self.watermark is not None
            and first <= self.watermark + ONE_DAY
            and last >= self.sealed_from - ONE_DAY
        )
        if not contiguous:
            self.days, self.imports, already = {}, {}, set()
            self.sealed_from, self.watermark = first, last
        else:
            assert self.sealed_from is not None and self.watermark is not None
            self.sealed_from = min(self.sealed_from, first)
            self.watermark = max(self.watermark, last)
        day = first
        while day <= last:
            if day not in already:
                slices = self.with_retired(day, derived.get(day) or {})
                self.retired.pop(day, None)
                if slices:
                    self.days[day] = slices
                else:
                    self.days.pop(day, None)
                marks = imports.get(day)
                if marks:
                    self.imports[day] = sorted(marks)
                else:
                    self.imports.pop(day, None)
            day += ONE_DAY

    def reseal(self, day: date, slices: DaySlices) -> None:
        """A sealed day derived anew under the same rules (the evidence its attribution rests
        on changed): its slices give way to these; its import marks stay."""
        if not self.is_sealed(day):
            return
        if slices:
            self.days[day] = slices
        else:
            self.days.pop(day, None)

    def invalidate(self, first: date, last: date, providers: frozenset[str]) -> bool:
        """Drop those providers' slices of [first, last] and pull the watermark back."""
        if self.watermark is None or self.sealed_from is None or first > self.watermark:
            return False
        for day, slices in self.days.items():
            if first <= day <= last:
                for provider in providers:
                    slices.pop(provider, None)
        for day, slices in self.retired.items():
            if first <= day <= last:
                for provider in providers:
                    slices.pop(provider, None)
        if self.imports is not None:
            self.imports = {d: m for d, m in self.imports.items() if d < first}
        new_watermark = first - ONE_DAY
        if new_watermark < self.sealed_from:
            self.sealed_from = self.watermark = None
        else:
            self.watermark = min(self.watermark, new_watermark)
        return True

    def forget_from(self, day: date) -> bool:
        """Days from `day` on are not sealed: a run whose clock was ahead sealed them early."""
        if self.watermark is None or self.sealed_from is None or self.watermark < day:
            return False
        self.days = {d: s for d, s in self.days.items() if d < day}
        if self.imports is not None:
            self.imports = {d: m for d, m in self.imports.items() if d < day}
        self.watermark = day - ONE_DAY
        if self.watermark < self.sealed_from:
            self.sealed_from = self.watermark = None
        return True

    def imported_span(self, floor: date) -> tuple[date, date] | None:
        """First and last sealed day whose slices hold imported or synced figures; for a file
        without marks, every sealed day from `floor` on (older ones cannot be derived again)."""
        if self.sealed_from is None or self.watermark is None:
            return None
        if self.imports is None:
            start = max(self.sealed_from, floor)
            return (start, self.watermark) if start <= self.watermark else None
        marked = [d for d, m in self.imports.items() if m and self.is_sealed(d)]
        return (min(marked), max(marked)) if marked else None

    def remember_first_seen(self, namespace: str, seen: dict[str, int], before_ms: int) -> None:
        """Keep the first-seen times before `before_ms` (sealed days); an earlier time wins."""
        held = self.first_seen.setdefault(namespace, {})
        for key, ms in seen.items():
            if ms < before_ms:
                old = held.get(key)
                if old is None or ms < old:
                    held[key] = ms

    def remember_paths(self, paths: dict[str, str]) -> None:
        """Keep the folders of the projects the sealed days hold; the latest read's wins."""
        held = {p for slices in self.days.values() for s in slices.values() for p in s.projects}
        kept = {k: v for k, v in self.paths.items() if k in held}
        kept.update((k, v) for k, v in paths.items() if k in held)
        self.paths = dict(sorted(kept.items()))

    def dump(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "rules": self.rules,
            "timezone": self.timezone,
            "dbPath": self.db_path,
            "sealedFrom": self.sealed_from.isoformat() if self.sealed_from else None,
            "watermark": self.watermark.isoformat() if self.watermark else None,
            "days": {
                d.isoformat(): {p: s.dump() for p, s in slices.items()}
                for d, slices in sorted(self.days.items())
                if slices
            },
            **(
                {}
                if self.imports is None
                else {"imports": {d.isoformat(): m for d, m in sorted(self.imports.items())}}
            ),
            "firstSeen": self.first_seen,
            "paths": self.paths,
            **(
                {
                    "retired": {
                        d.isoformat(): {p: s.dump() for p, s in slices.items()}
                        for d, slices in sorted(self.retired.items())
                        if slices
                    }
                }
                if self.retired
                else {}
            ),
        }

    def keep_before(self, floor: date) -> None:
        """Only the sealed days before `floor` stay sealed; the rest is dropped."""
        if self.sealed_from is None or self.watermark is None or self.sealed_from >= floor:
            self.sealed_from = self.watermark = None
            self.days = {}
            return
        self.watermark = min(self.watermark, floor - ONE_DAY)
        self.days = {d: s for d, s in self.days.items() if self.is_sealed(d)}
        if self.imports is not None:
            self.imports = {d: m for d, m in self.imports.items() if self.is_sealed(d)}

    @classmethod
    def load(cls, raw: Any, version: int = VERSION) -> DailyCache | None:
        if not isinstance(raw, dict) or raw.get("version") != version:
            return None
        try:
            sealed_from = raw["sealedFrom"]
            watermark = raw["watermark"]
            imports = raw.get("imports")
            return cls(
                timezone=str(raw["timezone"]),
                db_path=str(raw["dbPath"]),
                sealed_from=date.fromisoformat(sealed_from) if sealed_from else None,
                watermark=date.fromisoformat(watermark) if watermark else None,
                days={
                    date.fromisoformat(d): {str(p): Slice.load(s) for p, s in slices.items()}
                    for d, slices in raw["days"].items()
                },
                imports=None
                if imports is None
                else {date.fromisoformat(d): [str(p) for p in m] for d, m in imports.items()},
                first_seen={
                    str(ns): {str(k): int(v) for k, v in seen.items()}
                    for ns, seen in raw.get("firstSeen", {}).items()
                },
                paths={str(k): str(v) for k, v in raw.get("paths", {}).items()},
                rules=raw.get("rules") if isinstance(raw.get("rules"), str) else None,
                retired={
                    date.fromisoformat(d): {str(p): Slice.load(s) for p, s in slices.items()}
                    for d, slices in raw.get("retired", {}).items()
                },
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def daily_path(cache_dir: Path) -> Path:
    return cache_dir / FILE


def load_daily(
    cache_dir: Path, *, timezone: str, db_path: str, floor: date | None = None
) -> DailyCache:
    """The daily cache for this zone and database; anything else (or corrupt) starts empty.
    Callers must not modify it: the next caller may get the same object (`update_daily`
    changes a copy of its own).

    A file of other rules or an older version is brought up to date first (`renew` at the
    6-month `floor`, default today's).
    """
    _migrate(cache_dir, floor)
    return _load(cache_dir, timezone, db_path, shared=True)


_shared: FileMemo[DailyCache] = FileMemo()  # a long-lived service loads it at every refresh


def _parse(raw: bytes) -> DailyCache | None:
    return DailyCache.load(loads_json(raw))


def _load(cache_dir: Path, timezone: str, db_path: str, *, shared: bool = False) -> DailyCache:
    """`shared`: a copy other readers may get too, never to be modified."""
    path = daily_path(cache_dir)
    cache = _shared.read(path, _parse) if shared else DailyCache.load(read_json(path))
    if cache is None or cache.timezone != timezone or cache.db_path != db_path:
        return DailyCache(timezone=timezone, db_path=db_path)
    return cache


def _migrate(cache_dir: Path, floor: date | None) -> None:
    """Bring the file to today's layout and rules: a file of other rules is renewed, and with
    no current file an older version's is migrated (both once, written at once: the old file
    may be swept at any moment after)."""
    path = daily_path(cache_dir)
    current = _shared.read(path, _parse)
    if current is not None:
        if current.rules != RULES:
            with locked(path):
                cache = DailyCache.load(read_json(path))
                if cache is not None and cache.rules != RULES:
                    cache.renew(floor or six_month_floor())
                    write_cache_json(path, cache.dump())
        return
    if path.exists():
        return  # damaged: started again empty, as any file of ours
    old = None
    for version in OLDER:
        old = DailyCache.load(read_json(cache_dir / f"daily.v{version}.json"), version)
        if old is not None:
            break
    if old is None:
        return
    old.renew(floor or six_month_floor())
    with locked(path):
        if not path.exists():  # another process may have migrated it meanwhile
            write_cache_json(path, old.dump())


def update_daily(
    cache_dir: Path, *, timezone: str, db_path: str, change: Any, floor: date | None = None
) -> DailyCache:
    """Read-modify-write under the lock: `change(cache)` mutates the freshest copy."""
    path = daily_path(cache_dir)
    _migrate(cache_dir, floor)
    with locked(path):
        cache = _load(cache_dir, timezone, db_path)
        change(cache)
        write_cache_json(path, cache.dump())
    return cache
