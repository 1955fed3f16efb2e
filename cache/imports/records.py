"""Value types of the Cursor usage store: ranges, stored events, snapshots, summaries, coverage.

Pure data and pure functions; `import_store` does the file reading, locking and writing.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, BinaryIO, Final, overload

from codeburn.providers import (
    CURSOR,
    CURSOR_AGENT,
    EPOCH,
    GROKBOT,
    CodeBurnError,
    EventDetail,
    UsageRow,
    billed_amount,
    clean_text,
    day_end_ms,
    identity,
    iso_utc,
    local_day,
    local_midnight_ms,
    normalise_model,
    parse_iso_ms,
)

VERSION: Final = 3
V2: Final = 2
V1: Final = 1
# Where a stored event's export cells come from: the usage export, or a JSON usage event alone.
CELLS_CSV: Final = "csv"
CELLS_JSON: Final = "json"
SOURCE_IMPORT: Final = "import"
SOURCE_SYNC: Final = "sync"
REMOVE_FIX: Final = "codeburn import cursor --remove"

ACCOUNT_PATTERN: Final = re.compile(r"[0-9a-f]{16}")
_HASH = re.compile(r"[0-9a-f]{32}")
_ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_EPOCH_MS = re.compile(r"\d{12,14}")
# Epoch-ms boundaries, the same 2000–2100 as dates (UTC, whatever the local zone).
_FIRST_MS: Final = (datetime(2000, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
_LAST_MS: Final = (datetime(2101, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1) - 1


class ImportStoreError(CodeBurnError):
    """The stored file cannot be read; the message carries the fix."""


class CoverageError(CodeBurnError, ValueError):
    """A bad --from/--to, or rows outside them: the import is refused and nothing is stored."""


@dataclass(frozen=True, slots=True)
class Range:
    """Coverage: inside it the stored events stand for local Cursor estimates (ends included)."""

    start_ms: int
    end_ms: int
    source: str
    account: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "start": iso_utc(self.start_ms),
            "end": iso_utc(self.end_ms),
            "source": self.source,
            "account": self.account,
        }


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """A stored row; `exported_at_ms` (when its export was made) decides which rendering wins.

    `detail` is what the same event's JSON usage event added (conversation, kind, charge, fee);
    `cells` says whether `row` holds an export's cells or ones made from the JSON event alone.
    """

    row: UsageRow
    source: str
    account: str | None = None
    exported_at_ms: int | None = None
    detail: EventDetail | None = None
    cells: str = CELLS_CSV

    def to_json(self) -> dict[str, Any]:
        r = self.row
        d = self.detail
        return {
            "time": iso_utc(r.timestamp_ms),
            "date": r.date,
            "cloudAgentId": r.cloud_agent_id,
            "automationId": r.automation_id,
            "kind": r.kind,
            "model": r.model,
            "maxMode": r.max_mode,
            "cacheWrite": r.cache_write,
            "input": r.input,
            "cacheRead": r.cache_read,
            "output": r.output,
            "totalTokens": r.total,
            "cost": r.cost,
            "requests": r.requests,
            "tokensOnly": r.tokens_only,
            "hash": r.hash,
            "source": self.source,
            "account": self.account,
            "exportedAt": _iso(self.exported_at_ms),
            "cells": self.cells,
            "usageEvent": _usage_event_json(d),
        }


class PackedEvents(Sequence[StoredEvent]):
    """Stored events held compactly (a fraction of their size as objects): numbers in
    arrays, repeated cells as indexes into one table, the identity as 16 bytes, and the Date cell
    only when it is not the event's own ISO time. An event is made again when it is read."""

    __slots__ = (
        "_cells",
        "_dates",
        "_details",
        "_flags",
        "_hashes",
        "_index",
        "_numbers",
        "_table",
    )

    _WIDTH: Final = 7  # time, cacheWrite, input, cacheRead, output, totalTokens, exportedAt
    _CELLS: Final = 10  # cloudAgentId .. cells, see `append`

    def __init__(self, events: Iterable[StoredEvent] = ()) -> None:
        self._numbers = array("q")
        self._cells = array("I")
        self._hashes = bytearray()
        self._flags = bytearray()
        self._dates: list[str | None] = []
        self._details: dict[int, EventDetail] = {}
        self._table: list[str | None] = []
        self._index: dict[str | None, int] = {}
        for event in events:
            self.append(event)

    def _cell(self, value: str | None) -> int:
        n = self._index.get(value)
        if n is None:
            n = self._index[value] = len(self._table)
            self._table.append(value)
        return n

    def append(self, event: StoredEvent, *, iso_time: str | None = None) -> None:
        r = event.row
        self.append_fields(
            (r.timestamp_ms, r.cache_write, r.input, r.cache_read, r.output, r.total),
            (
                r.cloud_agent_id, r.automation_id, r.kind, r.model, r.max_mode, r.cost,
                r.requests, event.source, event.account, event.cells,
            ),
            date=r.date, hash_=r.hash, tokens_only=r.tokens_only,
            exported_ms=event.exported_at_ms, detail=event.detail, iso_time=iso_time,
        )  # fmt: skip

    def append_fields(
        self,
        numbers: tuple[int, int, int, int, int, int],
        cells: tuple[str, str, str, str, str, str, str, str, str | None, str],
        *,
        date: str,
        hash_: str,
        tokens_only: bool,
        exported_ms: int | None,
        detail: EventDetail | None,
        iso_time: str | None = None,
    ) -> None:
        """Add one event from its fields: `numbers` are the time and the five token counts,
        `cells` the cloud agent id .. cells (as `_event` gives them back). `iso_time`, a text the
        time was read from, spares computing `iso_utc` when it has `iso_utc`'s own shape (a
        text of that shape is the only one for its time)."""
        self._numbers.extend((*numbers, -1 if exported_ms is None else exported_ms))
        cell = self._cell
        self._cells.extend([cell(value) for value in cells])
        self._hashes += bytes.fromhex(hash_)
        self._flags.append(tokens_only)
        if iso_time is None or not _ISO_UTC.fullmatch(iso_time):
            iso_time = iso_utc(numbers[0])
        self._dates.append(None if date == iso_time else date)
        if detail is not None:
            self._details[len(self._flags) - 1] = detail

    def put(self, n: int, event: StoredEvent) -> None:
        """Event `n` becomes `event` (the same identity: a merge chose another rendering)."""
        r = event.row
        if bytes.fromhex(r.hash) != self.hash_at(n):
            raise ValueError("put() keeps an event's identity")
        exported = -1 if event.exported_at_ms is None else event.exported_at_ms
        width, count = self._WIDTH, self._CELLS
        numbers = (r.timestamp_ms, r.cache_write, r.input, r.cache_read, r.output, r.total)
        self._numbers[n * width : (n + 1) * width] = array("q", (*numbers, exported))
        cells = (
            r.cloud_agent_id, r.automation_id, r.kind, r.model, r.max_mode, r.cost,
            r.requests, event.source, event.account, event.cells,
        )  # fmt: skip
        self._cells[n * count : (n + 1) * count] = array("I", [self._cell(c) for c in cells])
        self._flags[n] = r.tokens_only
        self._dates[n] = None if r.date == iso_utc(r.timestamp_ms) else r.date
        if event.detail is None:
            self._details.pop(n, None)
        else:
            self._details[n] = event.detail

    def keep_only(self, keep: bytearray) -> None:
        """Drop the events whose flag in `keep` is 0, in place (the others keep their order)."""
        width, count = self._WIDTH, self._CELLS
        numbers, cells, hashes, flags, dates = (
            self._numbers, self._cells, self._hashes, self._flags, self._dates
        )  # fmt: skip
        details: dict[int, EventDetail] = {}
        w = 0
        for n in range(len(self)):
            if not keep[n]:
                continue
            if w != n:
                numbers[w * width : (w + 1) * width] = numbers[n * width : (n + 1) * width]
                cells[w * count : (w + 1) * count] = cells[n * count : (n + 1) * count]
                hashes[w * 16 : (w + 1) * 16] = hashes[n * 16 : (n + 1) * 16]
                flags[w], dates[w] = flags[n], dates[n]
            if n in self._details:
                details[w] = self._details[n]
            w += 1
        del numbers[w * width :], cells[w * count :], hashes[w * 16 :], flags[w:], dates[w:]
        self._details = details

    def times(self) -> array[int]:
        """The events' times (epoch ms), in their order: one array, no object per event."""
        return self._numbers[:: self._WIDTH]

    def time_at(self, n: int) -> int:
        return self._numbers[n * self._WIDTH]

    def tokens_at(self, n: int) -> int:
        """Cache write + input + cache read + output of event `n`."""
        start = n * self._WIDTH + 1
        return sum(self._numbers[start : start + 4])

    def kind_at(self, n: int) -> str:
        return str(self._table[self._cells[n * self._CELLS + 2]])

    def hash_at(self, n: int) -> bytes:
        return bytes(self._hashes[n * 16 : (n + 1) * 16])

    def order(self) -> Iterator[int]:
        """The positions in the store's order: by time, then identity."""
        width, hashes = self._WIDTH, self._hashes
        keys = [
            (self._numbers[n * width] << 160)
            | (int.from_bytes(hashes[n * 16 : (n + 1) * 16], "big") << 32)
            | n
            for n in range(len(self))
        ]
        keys.sort()
        for n, key in enumerate(keys):
            keys[n] = 0  # each key is let go once it was given
            yield key & 0xFFFFFFFF

    def __len__(self) -> int:
        return len(self._flags)

    @overload
    def __getitem__(self, index: int) -> StoredEvent: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[StoredEvent, ...]: ...
    def __getitem__(self, index: int | slice) -> StoredEvent | tuple[StoredEvent, ...]:
        if isinstance(index, slice):
            return tuple(self._event(n) for n in range(len(self))[index])
        n = range(len(self))[index]  # IndexError and negative indexes as for a tuple
        return self._event(n)

    def __iter__(self) -> Iterator[StoredEvent]:
        for n in range(len(self)):
            yield self._event(n)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def with_detail(self) -> Iterator[tuple[int, str, str, EventDetail]]:
        """(time, Kind cell, Model cell, JSON detail) of the events a JSON event enriched,
        without making the events again."""
        numbers, cells, table = self._numbers, self._cells, self._table
        width, count = self._WIDTH, self._CELLS
        for n, detail in self._details.items():
            at = n * count
            yield numbers[n * width], str(table[cells[at + 2]]), str(table[cells[at + 3]]), detail

    def models(self) -> set[str]:
        """The distinct Model cells, without making the events again."""
        models = {self._cells[n * self._CELLS + 3] for n in range(len(self))}
        return {str(self._table[m]) for m in models}

    def same_at(self, n: int, other: PackedEvents, m: int) -> bool:
        """Whether event `n` equals event `m` of `other`, without making either."""
        width, count = self._WIDTH, self._CELLS
        numbers = self._numbers[n * width : (n + 1) * width]
        if (
            numbers != other._numbers[m * width : (m + 1) * width]
            or self._hashes[n * 16 : (n + 1) * 16] != other._hashes[m * 16 : (m + 1) * 16]
            or self._flags[n] != other._flags[m]
            or self._dates[n] != other._dates[m]
            or self._details.get(n) != other._details.get(m)
        ):
            return False
        mine, theirs = self._table, other._table
        return all(
            mine[a] == theirs[b]
            for a, b in zip(
                self._cells[n * count : (n + 1) * count],
                other._cells[m * count : (m + 1) * count],
                strict=True,
            )
        )

    def json_at(self, n: int, iso: Callable[[int], str] = iso_utc) -> dict[str, Any]:
        """`self[n].to_json()` without making the event (`iso` may remember the texts)."""
        ts, cw, inp, cr, out, total, exported = self._numbers[
            n * self._WIDTH : (n + 1) * self._WIDTH
        ]
        table = self._table
        cloud, automation, kind, model, max_mode, cost, requests, source, account, cells = (
            table[c] for c in self._cells[n * self._CELLS : (n + 1) * self._CELLS]
        )
        time = iso_utc(ts)
        date = self._dates[n]
        d = self._details.get(n)
        return {
            "time": time,
            "date": time if date is None else date,
            "cloudAgentId": cloud,
            "automationId": automation,
            "kind": kind,
            "model": model,
            "maxMode": max_mode,
            "cacheWrite": cw,
            "input": inp,
            "cacheRead": cr,
            "output": out,
            "totalTokens": total,
            "cost": cost,
            "requests": requests,
            "tokensOnly": bool(self._flags[n]),
            "hash": self._hashes[n * 16 : (n + 1) * 16].hex(),
            "source": source,
            "account": account,
            "exportedAt": None if exported < 0 else iso(exported),
            "cells": cells,
            "usageEvent": _usage_event_json(d),
        }

    def _event(self, n: int) -> StoredEvent:
        ts, cw, inp, cr, out, total, exported = self._numbers[
            n * self._WIDTH : (n + 1) * self._WIDTH
        ]
        table = self._table
        cloud, automation, kind, model, max_mode, cost, requests, source, account, cells = (
            table[c] for c in self._cells[n * self._CELLS : (n + 1) * self._CELLS]
        )
        date = self._dates[n]
        row = UsageRow(
            date=iso_utc(ts) if date is None else date,
            timestamp_ms=ts,
            cloud_agent_id=str(cloud),
            automation_id=str(automation),
            kind=str(kind),
            model=str(model),
            max_mode=str(max_mode),
            cache_write=cw,
            input=inp,
            cache_read=cr,
            output=out,
            total=total,
            cost=str(cost),
            hash=self._hashes[n * 16 : (n + 1) * 16].hex(),
            requests=str(requests),
            tokens_only=bool(self._flags[n]),
        )
        exported_ms = None if exported < 0 else exported
        return StoredEvent(row, str(source), account, exported_ms, self._details.get(n), str(cells))


@dataclass(frozen=True, slots=True)
class ImportSnapshot:
    """What the store held when read (empty and `exists=False` when there is no store)."""

    exists: bool
    ranges: tuple[Range, ...] = ()
    events: Sequence[StoredEvent] = ()

    @property
    def has_grokbot(self) -> bool:
        events = self.events
        models = (
            events.models() if isinstance(events, PackedEvents) else (e.row.model for e in events)
        )
        return any(normalise_model(model)[0] == GROKBOT for model in models)


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """The result of an import or a sync; `to_json()` is docs/import.md#summary."""

    changed: bool
    added: int
    skipped: int
    total: int
    coverage_start_ms: int | None
    coverage_end_ms: int | None
    inferred: bool
    tokens: int
    replaced: tuple[str, ...]
    first_day: date | None = None  # local days whose served figures changed (None: nothing did)
    last_day: date | None = None
    window_start_ms: int | None = None  # sync only
    window_end_ms: int | None = None
    empty: bool | None = None
    future: int = 0  # rows dated after now + 1 day: refused, not stored
    user_api_key: int = 0  # rows billed by the user's own API key (stored, listed apart)

    @property
    def is_sync(self) -> bool:
        return self.window_start_ms is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "changed": self.changed,
            "added": self.added,
            "skipped": self.skipped,
            "total": self.total,
            "coverage": {
                "start": _iso(self.coverage_start_ms),
                "end": _iso(self.coverage_end_ms),
                "inferred": self.inferred,
            },
            "tokens": self.tokens,
            "replaced": list(self.replaced),
            "future": self.future,
            "userApiKey": self.user_api_key,
        }
        if self.is_sync:
            out["window"] = {"start": _iso(self.window_start_ms), "end": _iso(self.window_end_ms)}
            out["empty"] = bool(self.empty)
        return out


@dataclass(frozen=True, slots=True)
class RemoveResult:
    existed: bool
    ranges: tuple[Range, ...]
    first_day: date | None  # local days the removed data covered, for the daily cache
    last_day: date | None


class CoverageIndex:
    """Merged coverage intervals with a binary search: is a local call replaced by the store?"""

    def __init__(self, ranges: Iterable[Range], *, grokbot: bool = False) -> None:
        spans = _merge_spans((r.start_ms, r.end_ms) for r in ranges)
        self._starts = [s for s, _ in spans]
        self._ends = [e for _, e in spans]
        self.grokbot = grokbot

    @classmethod
    def from_snapshot(cls, snapshot: ImportSnapshot) -> CoverageIndex:
        return cls(snapshot.ranges, grokbot=snapshot.has_grokbot)

    def __bool__(self) -> bool:
        return bool(self._starts)

    def covers_time(self, ts_ms: int) -> bool:
        i = bisect.bisect_right(self._starts, ts_ms) - 1
        return i >= 0 and ts_ms <= self._ends[i]

    def covers(self, provider: str, ts_ms: int) -> bool:
        """True when a local call of `provider` at `ts_ms` is to be dropped for stored events."""
        if provider in (CURSOR, CURSOR_AGENT) or (provider == GROKBOT and self.grokbot):
            return self.covers_time(ts_ms)
        return False


# --- the file format ---------------------------------------------------------------------------


def decode_store(raw: bytes, version: int = VERSION) -> ImportSnapshot:
    """Parse the store's bytes; ValueError/TypeError/KeyError/... when they are not one.

    A version 2 store (before the JSON usage events) reads as version 3 events with no detail.
    A version 1 store (events keyed by a hash of every cell) is read into version 2 events:
    each gets its identity, and v1 events that are one event re-rendered become one (`merge_v1`).
    """
    doc = _loads(raw)
    if not isinstance(doc, dict) or doc.get("version") != version:
        raise ValueError(f"not a version {version} store")
    ranges = tuple(_range_from(item) for item in _list(doc["ranges"]))
    if version == V1:
        events = merge_v1(_event_from(item, v1=True) for item in _list(doc["events"]))
    else:
        # Cells that repeat (kind, model, cost, export time, ...) are one object each: a large
        # store holds hundreds of thousands of events.
        memo: dict[Any, Any] = {}
        items = _list(doc["events"])
        events = tuple(_event_from(item, v2=version == V2, share=memo.setdefault) for item in items)
    return ImportSnapshot(exists=True, ranges=ranges, events=events)


def merge_v1(events: Iterable[StoredEvent]) -> tuple[StoredEvent, ...]:
    """One event per identity; of re-renders the richest is kept (manual, billed, most digits)."""
    best: dict[str, StoredEvent] = {}
    for event in events:
        old = best.get(event.row.hash)
        if old is None or _richness(event) > _richness(old):
            best[event.row.hash] = event
    return tuple(best.values())


def _richness(event: StoredEvent) -> tuple[bool, bool, int]:
    cost = event.row.cost.strip()
    return event.source == SOURCE_IMPORT, billed_amount(cost) is not None, len(cost)


def encode_store(ranges: Sequence[Range], events: Iterable[StoredEvent]) -> dict[str, Any]:
    ordered = sorted(events, key=lambda e: (e.row.timestamp_ms, e.row.hash))
    return {
        "version": VERSION,
        "ranges": [r.to_json() for r in ranges],
        "events": [e.to_json() for e in ordered],
    }


def encode_store_lines(ranges: Sequence[Range], events: Iterable[StoredEvent]) -> Iterator[bytes]:
    """`encode_store` as JSON text made piece by piece, one event a line (`decode_store_file`
    reads it back line by line): a large store is never one string in memory."""
    items: Iterator[dict[str, Any]]
    if isinstance(events, PackedEvents):
        # Never every event as an object: each is encoded from its packed fields.
        exported = functools.lru_cache(maxsize=64)(iso_utc)
        items = (events.json_at(n, exported) for n in events.order())
        count = len(events)
    else:
        ordered = sorted(events, key=lambda e: (e.row.timestamp_ms, e.row.hash))
        items = (e.to_json() for e in ordered)
        count = len(ordered)
    head = json.dumps({"version": VERSION, "ranges": [r.to_json() for r in ranges]}, **_COMPACT)
    yield (head[:-1] + ',"events":[\n').encode()
    last = count - 1
    for n, item in enumerate(items):
        line = json.dumps(item, **_COMPACT)
        yield (line + (",\n" if n < last else "\n")).encode()
    yield b"]}"


def decode_store_file(handle: BinaryIO, version: int = VERSION) -> ImportSnapshot:
    """`decode_store` of an open store file; the layout `encode_store_lines` writes is read line
    by line (never all of it in memory), any other valid JSON as a whole."""
    first = handle.readline()
    if version != VERSION or not first.endswith(b',"events":[\n'):
        return decode_store(first + handle.read(), version)
    head = json.loads(first[:-1] + b"]}")
    if not isinstance(head, dict) or head.get("version") != version or set(head) != _KEYS:
        raise ValueError(f"not a version {version} store")
    ranges = tuple(_range_from(item) for item in _list(head["ranges"]))
    events = PackedEvents()
    more = True
    for line in handle:
        if not more:
            if line != b"]}":
                raise ValueError("text after the last event")
            return ImportSnapshot(exists=True, ranges=ranges, events=events)
        if line == b"]}" and not events:
            return ImportSnapshot(exists=True, ranges=ranges, events=events)
        if not line.endswith(b"\n"):
            raise ValueError("the store ends inside an event")
        text = line[:-1]
        more = text.endswith(b",")
        _pack(events, _loads(text[:-1] if more else text))
    raise ValueError("the store ends before its last event")


def _loads(text: bytes) -> Any:
    """json.loads, with the lone surrogates an older CodeBurn stored ("\\ud800" escapes: valid
    JSON, but text no UTF-8 output can write) replaced as a sync now does where they enter."""
    doc = json.loads(text)
    if b"\\ud" in text or b"\\uD" in text:  # an escaped surrogate: a pair, or a lone one
        doc = _clean_doc(doc)
    return doc


def _clean_doc(doc: Any) -> Any:
    if isinstance(doc, str):
        return clean_text(doc)
    if isinstance(doc, list):
        return [_clean_doc(item) for item in doc]
    if isinstance(doc, dict):
        return {key: _clean_doc(value) for key, value in doc.items()}
    return doc


_COMPACT: Final[dict[str, Any]] = {"separators": (",", ":")}
_KEYS: Final = frozenset({"version", "ranges", "events"})


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("expected a list")
    return value


def _str(item: dict[str, Any], key: str) -> str:
    value = item[key]
    if not isinstance(value, str):
        raise ValueError(f"{key} is not a string")
    return value


def _int(item: dict[str, Any], key: str) -> int:
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} is not a count")
    return value


def _time(item: dict[str, Any], key: str) -> int:
    ms = parse_iso_ms(_str(item, key))
    if ms is None:
        raise ValueError(f"{key} is not a time")
    return ms


def _source(item: dict[str, Any]) -> tuple[str, str | None]:
    source = _str(item, "source")
    account = item.get("account")
    if source == SOURCE_IMPORT and account is None:
        return source, None
    if source == SOURCE_SYNC and isinstance(account, str) and ACCOUNT_PATTERN.fullmatch(account):
        return source, account
    raise ValueError("bad source/account")


def _range_from(item: Any) -> Range:
    source, account = _source(item)
    start, end = _time(item, "start"), _time(item, "end")
    if start > end:
        raise ValueError("range ends before it starts")
    return Range(start, end, source, account)


def _bool(item: dict[str, Any], key: str) -> bool:
    value = item[key]
    if not isinstance(value, bool):
        raise ValueError(f"{key} is not true/false")
    return value


def _same(value: Any, _default: Any = None) -> Any:
    return value


def _event_from(
    item: Any, *, v1: bool = False, v2: bool = False, share: Callable[[Any, Any], Any] = _same
) -> StoredEvent:
    source, account = _source(item)
    source, account = share(source, source), share(account, account)

    def shared(key: str) -> str:
        value = _str(item, key)
        return str(share(value, value))

    row = UsageRow(
        date=_str(item, "date"),
        timestamp_ms=_time(item, "time"),
        cloud_agent_id=shared("cloudAgentId"),
        automation_id=shared("automationId"),
        kind=shared("kind"),
        model=shared("model"),
        max_mode=shared("maxMode"),
        cache_write=_int(item, "cacheWrite"),
        input=_int(item, "input"),
        cache_read=_int(item, "cacheRead"),
        output=_int(item, "output"),
        total=_int(item, "totalTokens"),
        cost=shared("cost"),
        hash=_str(item, "hash"),
        requests="" if v1 else shared("requests"),
        tokens_only=False if v1 else _bool(item, "tokensOnly"),
    )
    if not _HASH.fullmatch(row.hash):
        raise ValueError("hash is not 32 hex digits")
    if v1:
        tokens = (row.cache_write, row.input, row.cache_read, row.output)
        return StoredEvent(
            replace(row, hash=identity(row.timestamp_ms, row.model, tokens)), source, account
        )
    exported = item["exportedAt"]
    exported_ms = None if exported is None else _time(item, "exportedAt")
    exported_ms = share(exported_ms, exported_ms)
    if v2:
        return StoredEvent(row, source, account, exported_ms)
    cells = shared("cells")
    if cells not in (CELLS_CSV, CELLS_JSON):
        raise ValueError("cells is neither csv nor json")
    return StoredEvent(row, source, account, exported_ms, _detail_from(item["usageEvent"]), cells)


def _pack(events: PackedEvents, item: Any) -> None:
    """`_event_from` of a v3 event straight into `events` (no objects made for it)."""
    source, account = _source(item)
    hash_ = _str(item, "hash")
    if not _HASH.fullmatch(hash_):
        raise ValueError("hash is not 32 hex digits")
    cells = _str(item, "cells")
    if cells not in (CELLS_CSV, CELLS_JSON):
        raise ValueError("cells is neither csv nor json")
    exported_ms = None if item["exportedAt"] is None else _time(item, "exportedAt")
    events.append_fields(
        (
            _time(item, "time"), _int(item, "cacheWrite"), _int(item, "input"),
            _int(item, "cacheRead"), _int(item, "output"), _int(item, "totalTokens"),
        ),
        (
            _str(item, "cloudAgentId"), _str(item, "automationId"), _str(item, "kind"),
            _str(item, "model"), _str(item, "maxMode"), _str(item, "cost"),
            _str(item, "requests"), source, account, cells,
        ),
        date=_str(item, "date"),
        hash_=hash_,
        tokens_only=_bool(item, "tokensOnly"),
        exported_ms=exported_ms,
        detail=_detail_from(item["usageEvent"]),
        iso_time=item["time"],
    )  # fmt: skip


def _detail_from(value: Any) -> EventDetail | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("usageEvent is not an object")
    return EventDetail(
        kind=_str(value, "kind"),
        conversation_id=_str(value, "conversationId"),
        charged_cents=_cents(value, "chargedCents"),
        cursor_fee_cents=_cents(value, "cursorTokenFee"),
    )


def _cents(item: dict[str, Any], key: str) -> float | None:
    value = item[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise ValueError(f"{key} is not an amount")
    return float(value)


# --- coverage ----------------------------------------------------------------------------------


def _merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of inclusive ms intervals; touching ones (next start ≤ end + 1 ms) become one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def merge_ranges(ranges: Iterable[Range]) -> tuple[Range, ...]:
    """Ranges merged per (source, account), in a stable order."""
    groups: dict[tuple[str, str | None], list[tuple[int, int]]] = {}
    for r in ranges:
        groups.setdefault((r.source, r.account), []).append((r.start_ms, r.end_ms))
    out = [
        Range(start, end, source, account)
        for (source, account), spans in groups.items()
        for start, end in _merge_spans(spans)
    ]
    return tuple(sorted(out, key=lambda r: (r.source, r.account or "", r.start_ms)))


def parse_boundary(text: str, *, end: bool, option: str = "") -> int:
    """Epoch ms of a --from/--to value: a date (whole local day), an ISO time, or epoch ms.

    A date as `end` means its last millisecond; an ISO time without a zone is local time.
    """
    value = text.strip()
    name = option or ("--to" if end else "--from")
    if _DATE_ONLY.fullmatch(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            day = None
        if day is not None and 2000 <= day.year <= 2100:
            return day_end_ms(day) if end else local_midnight_ms(day)
    elif _EPOCH_MS.fullmatch(value):
        ms = int(value)
        if _FIRST_MS <= ms <= _LAST_MS:  # `000000000000` is 1970: the same bound as dates
            return ms
    elif not value.isdigit():
        try:
            moment = datetime.fromisoformat(value.replace("z", "Z"))
        except ValueError:
            moment = None
        if moment is not None and 2000 <= moment.year <= 2100:
            return (moment.astimezone(UTC) - EPOCH) // timedelta(milliseconds=1)
    raise CoverageError(
        f"{name} {text!r} is not a date (YYYY-MM-DD), an ISO time or epoch milliseconds "
        "from 2000 to 2100"
    )


def replaced_providers(ranges: Sequence[Range], events: Iterable[StoredEvent]) -> tuple[str, ...]:
    if not ranges:
        return ()
    models = events.models() if isinstance(events, PackedEvents) else (e.row.model for e in events)
    grokbot = any(normalise_model(model)[0] == GROKBOT for model in models)
    return (CURSOR, CURSOR_AGENT, GROKBOT) if grokbot else (CURSOR, CURSOR_AGENT)


def days_of(times: Iterable[int | None]) -> tuple[date | None, date | None]:
    """First and last local day among the known times."""
    known = [t for t in times if t is not None]
    if not known:
        return None, None
    return local_day(min(known)), local_day(max(known))


def _usage_event_json(d: EventDetail | None) -> dict[str, Any] | None:
    """What a JSON usage event adds to a stored event, as the store writes it."""
    if d is None:
        return None
    return {
        "kind": d.kind,
        "conversationId": d.conversation_id,
        "chargedCents": d.charged_cents,
        "cursorTokenFee": d.cursor_fee_cents,
    }


def _iso(ms: int | None) -> str | None:
    return None if ms is None else iso_utc(ms)
