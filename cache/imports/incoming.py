"""The rows of one manual import, held packed while the file is read and merged into the store.

A 60 MB export has ~685,000 rows: as `UsageRow` objects they alone outgrow the memory an import
may take (~300 MB), so each row is packed (`PackedEvents`) as soon as it is parsed, and the
merge puts the store's events into the same packed events instead of making objects of both.
Every row is still read and checked before the store is opened: a broken row anywhere refuses
the file and nothing is stored.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codeburn.cache.imports.events import PackedEvents, StoredEvent
from codeburn.cache.imports.merge import FUTURE_SLACK_MS, coverage_of, keeps_detail, keeps_stored
from codeburn.cache.imports.records import SOURCE_IMPORT, CoverageError
from codeburn.providers import (
    DigestIndex,
    UsageRow,
    chosen_user,
    is_user_api_key,
    iter_csv,
    open_export,
)


class IncomingRows:
    """One export's rows as stored events (source `import`, the export's time), with the line
    and the User cell of each (the User cell only to pick one person's rows; never stored)."""

    __slots__ = ("_found", "_people", "_users", "events", "exported_ms", "lines", "repeats")

    def __init__(self, exported_ms: int) -> None:
        self.exported_ms = exported_ms
        self.events = PackedEvents()
        self.lines = array("I")
        self.repeats = 0  # rows folded into an earlier row of the same identity
        self._users = array("I")  # 0: no User cell, else 1 + its index in `_people`
        self._people: list[str] = []  # casefolded User cells
        self._found: dict[str, int] = {}  # casefolded → index; the first spelling in `_people`

    def add(self, row: UsageRow) -> None:
        # The Date cell is what the time was read from: `iso_time` spares formatting the time.
        self.events.append(
            StoredEvent(row, SOURCE_IMPORT, None, self.exported_ms), iso_time=row.date
        )
        self.lines.append(row.line)
        self._users.append(self._user(row.user) if row.user else 0)

    def _user(self, cell: str) -> int:
        folded = cell.casefold()
        n = self._found.get(folded)
        if n is None:
            n = self._found[folded] = len(self._people)
            self._people.append(cell)
        return n + 1

    def __len__(self) -> int:
        return len(self.events)

    def users(self) -> list[str]:
        """The distinct User cells (case-insensitive), sorted: `users_of` of the rows."""
        return sorted(self._people, key=str.casefold)

    def keep_person(self, user: str | None, signed_in: str | None) -> None:
        """Only one person's rows stay (`one_persons_rows`); ChooseUserError as there."""
        wanted = chosen_user(self.users(), user=user, signed_in=signed_in)
        if wanted is None:
            return
        mine = self._found[wanted] + 1
        self._keep_only(bytearray(u == mine for u in self._users))

    def drop_future(self, now: int) -> int:
        """Rows dated after now + 1 day are refused (`split_future`); how many there were."""
        latest = now + FUTURE_SLACK_MS
        keep = bytearray(ms <= latest for ms in self.events.times())
        future = len(keep) - sum(keep)
        if future:
            self._keep_only(keep)
        return future

    def _keep_only(self, keep: bytearray) -> None:
        self.events.keep_only(keep)
        for column in (self.lines, self._users):
            kept = array(column.typecode, (v for v, k in zip(column, keep, strict=True) if k))
            del column[:]
            column.extend(kept)

    def refuse_outside(self, start_ms: int | None, end_ms: int | None) -> None:
        """CoverageError naming the first row outside --from/--to (`refuse_outside`)."""
        if start_ms is None and end_ms is None:
            return
        times = self.events.times()
        outside = [
            n
            for n, ms in enumerate(times)
            if (start_ms is not None and ms < start_ms) or (end_ms is not None and ms > end_ms)
        ]
        if outside:
            first = outside[0]
            raise CoverageError(
                f"line {self.lines[first]}: {self.events[first].row.date.strip()} is outside "
                f"--from/--to ({len(outside)} row(s) outside); nothing was imported"
            )

    def coverage(
        self, start_ms: int | None, end_ms: int | None, mtime_ms: int
    ) -> tuple[int, int] | None:
        """`import_coverage` of the rows."""
        times = self.events.times()
        return coverage_of(
            min(times, default=None), max(times, default=None), start_ms, end_ms, mtime_ms
        )

    def tokens(self) -> int:
        return sum(self.events.tokens_at(n) for n in range(len(self.events)))

    def user_api_key(self) -> int:
        return sum(1 for n in range(len(self.events)) if is_user_api_key(self.events.kind_at(n)))


def read_incoming(csv_path: Path, exported_ms: int | None = None) -> IncomingRows:
    """Every row of the export at `csv_path`, checked and packed (CsvFormatError on the first
    broken one); the rows' export time is the file's modification time unless given."""
    with open_export(csv_path) as (handle, mtime_ms):
        incoming = IncomingRows(mtime_ms if exported_ms is None else exported_ms)
        for row in iter_csv(handle):
            incoming.add(row)
    return incoming


def incoming_of(rows: Iterable[UsageRow], exported_ms: int) -> IncomingRows:
    """Parsed rows as incoming rows. Rows of one export have distinct identities; should some
    repeat, they are folded here as the store would fold them one after the other (each
    repeat counted as skipped)."""
    folded: dict[str, StoredEvent] = {}
    repeats = 0
    for row in rows:
        new = StoredEvent(row, SOURCE_IMPORT, None, exported_ms)
        old = folded.get(row.hash)
        if old is not None:
            repeats += 1
            new = keeps_stored(old, new) or new
        folded[row.hash] = new
    incoming = IncomingRows(exported_ms)
    incoming.repeats = repeats
    for event in folded.values():
        incoming.add(event.row)
    return incoming


@dataclass(slots=True)
class Merged:
    """What merging incoming rows into the stored events did."""

    added: int = 0
    skipped: int = 0
    bumped: bool = False  # a kept event only records a newer export time
    first_ms: int | None = None  # the earliest and latest time of an event that changed
    last_ms: int | None = None

    def touch(self, ms: int) -> None:
        self.first_ms = ms if self.first_ms is None else min(self.first_ms, ms)
        self.last_ms = ms if self.last_ms is None else max(self.last_ms, ms)

    @property
    def touched(self) -> bool:
        return self.first_ms is not None


def merge_into(
    incoming: IncomingRows, stored: Iterable[StoredEvent], now: int
) -> tuple[Merged, int]:
    """The store's events merged into `incoming.events` (which becomes the whole new store):
    each row's rendering against the stored one of its identity (`keeps_stored`), then every
    stored event no row brought again; events dated after now + 1 day are dropped (`heal`).
    Returns what happened and how many stored events were dropped."""
    events = incoming.events
    index = DigestIndex()
    kept = array("I")  # positions in `stored` of the events that stay
    healed = 0
    stored_list = stored if isinstance(stored, PackedEvents) else PackedEvents(stored)
    for n in range(len(stored_list)):
        if stored_list.time_at(n) > now + FUTURE_SLACK_MS:
            healed += 1
            continue
        index.add(stored_list.hash_at(n))
        kept.append(n)
    matched = bytearray(len(index))
    merged = Merged(skipped=incoming.repeats)
    for n in range(len(events)):
        at = index.get(events.hash_at(n))
        if at is None:
            merged.added += 1
            merged.touch(events.time_at(n))
            continue
        matched[at] = 1
        merged.skipped += 1
        if events.same_at(n, stored_list, kept[at]):
            continue  # the same rendering from an export of the same time: the stored one stays
        old = stored_list[kept[at]]
        brought = events[n]
        new = keeps_detail(old, brought)
        keep = keeps_stored(old, new)
        if keep is not None:
            merged.bumped = merged.bumped or keep != old
            events.put(n, keep)
            continue
        if new is not brought:
            events.put(n, new)
        merged.touch(new.row.timestamp_ms)
    del index
    for at, n in enumerate(kept):
        if not matched[at]:
            events.append(stored_list[n])
    return merged, healed


__all__ = ["IncomingRows", "Merged", "incoming_of", "merge_into", "read_incoming"]
