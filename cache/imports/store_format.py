"""The usage store's file: JSON lines of ranges and events, read leniently, written compactly."""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any, BinaryIO, Final

from codeburn.cache.imports.events import CELLS_CSV, CELLS_JSON, PackedEvents, StoredEvent
from codeburn.cache.imports.records import (
    ACCOUNT_PATTERN,
    SOURCE_IMPORT,
    SOURCE_SYNC,
    V1,
    V2,
    VERSION,
    ImportSnapshot,
    Range,
)
from codeburn.providers import (
    EventDetail,
    UsageRow,
    billed_amount,
    clean_text,
    identity,
    iso_utc,
    parse_iso_ms,
)

_HASH = re.compile(r"[0-9a-f]{32}")


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
