"""Stored events of the Cursor usage store: one row as stored, and many packed compactly."""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, NamedTuple, overload

from codeburn.providers import EventDetail, UsageRow, iso_utc

# Where a stored event's export cells come from: the usage export, or a JSON usage event alone.
CELLS_CSV: Final = "csv"
CELLS_JSON: Final = "json"

_ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


class StoredEvent(NamedTuple):
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
            "exportedAt": iso_or_none(self.exported_at_ms),
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


def iso_or_none(ms: int | None) -> str | None:
    return None if ms is None else iso_utc(ms)
