"""Bubble rows → kept messages per conversation: the per-row loop of a parse
(docs/local-data.md#window-and-scan-budget, #conversation-id).

Kept apart from the reader's state machine; everything here is per-row work or plain data.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from functools import partial
from operator import attrgetter
from sys import intern
from typing import Any, Final

from codeburn.providers.agent import Turn
from codeburn.providers.calls import Call
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.emit import Bubble
from codeburn.providers.localtime import LATEST_MS, parse_iso_ms, valid_ms

DEFAULT_BUDGET: Final = 250_000
_new_tuple: Final = tuple.__new__
_ROWID: Final = attrgetter("rowid")
_COMPOSER_AT: Final = len(scan.CALL_KEY_PREFIX + scan.BUBBLE_LO)


def scan_budget() -> int:
    """`CODEBURN_CURSOR_MAX_BUBBLES`, else 250,000."""
    raw = os.environ.get("CODEBURN_CURSOR_MAX_BUBBLES", "").strip()
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_BUDGET
    return value if value > 0 else DEFAULT_BUDGET


def text_chars(text: object) -> int:
    """Characters of a bubble row's text (UTF-8 bytes, decoded with replacement), or the
    count a row already carries in its place."""
    if type(text) is int:
        return text
    if type(text) is not bytes:
        return 0
    return len(text) if text.isascii() else len(text.decode("utf-8", "replace"))


def counted_rows(rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Bubble rows with each text replaced by its character count: what `BubbleScan.add`
    takes of it, in a fraction of the bytes (rows sent from another process)."""
    return [(*row[:9], text_chars(row[9]), row[10]) for row in rows]


def composer_of(key: str) -> str | None:
    """Composer id of a bubble key, or None for sub-composer rows that are not sessions."""
    end = key.find(":", 9)
    composer = key[9:end] if end >= 0 else key[9:]
    if not composer or "\n" in composer or "\r" in composer or "\x00" in composer:
        return None
    return composer


@dataclass(slots=True)
class ConvState:
    """What is remembered of one conversation between reads."""

    kept: array[int] = field(default_factory=lambda: array("q"))  # inside floor and budget
    unkept: array[int] = field(default_factory=lambda: array("q"))  # seen, but not kept
    requests: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    newest_ms: int = 0
    undated: int = 0
    skipped_gauge: bool = False  # its meter is above the gauge bound
    inferred: int = 0  # kept bubbles dated from the conversation's times (docs/local-data.md)
    turns: tuple[Turn, ...] = ()  # recorded turns (none when any date was inferred)
    title: str | None = None  # composerData.name


@dataclass(slots=True)
class BubbleScan:
    """Accumulator of bubble rows (fed newest first)."""

    floor_iso: str
    cutoff: int | None
    budget: int | None
    bubbles: dict[str, list[Bubble]] = field(default_factory=dict)
    unkept: dict[str, array[int]] = field(default_factory=dict)  # seen but not kept
    undated: dict[str, int] = field(default_factory=dict)
    # Undated bubbles (no createdAt, no clientRpcSendTime) until their conversation's times
    # date them (`date_undated`), newest first like the rest.
    pending: dict[str, list[Bubble]] = field(default_factory=dict)
    inferred: dict[str, int] = field(default_factory=dict)
    other_requests: set[str] = field(default_factory=set)
    subcomposer: int = 0
    kept: int = 0
    budget_hit: bool = False

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its bubbles as plain tuples (a cold 3.x parse's second process sends
        its scan): a NamedTuple pickles and unpickles through a Python-level call each."""
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        state["bubbles"] = {c: list(map(tuple, group)) for c, group in self.bubbles.items()}
        state["pending"] = {c: list(map(tuple, group)) for c, group in self.pending.items()}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        bubble = partial(_new_tuple, Bubble)
        self.bubbles = {c: list(map(bubble, group)) for c, group in state["bubbles"].items()}
        self.pending = {c: list(map(bubble, group)) for c, group in state["pending"].items()}

    def add(self, rows: Iterable[tuple[Any, ...]]) -> tuple[int, int]:  # noqa: PLR0915 - the per-row loop of a parse, inlined for speed
        """Take rows; returns (kept, dated before the floor) of this batch."""
        kept = before = 0
        floor_iso = self.floor_iso
        low = self.cutoff if self.cutoff is not None else 0  # ROWIDs are positive
        room = self.budget - self.kept if self.budget is not None else 1 << 62
        budget_hit = self.budget_hit
        bubbles, unkept_by, other, undated = (
            self.bubbles,
            self.unkept,
            self.other_requests,
            self.undated,
        )
        for rowid, key, typ, created, ts, req, tin, tout, model, text, langs in rows:
            end = key.find(":", _COMPOSER_AT)
            composer = key[_COMPOSER_AT:end] if end >= 0 else key[_COMPOSER_AT:]
            if not composer or "\n" in composer or "\r" in composer or "\x00" in composer:
                self.subcomposer += 1
            else:
                if type(created) is not str or ts is None or not 0 <= ts < LATEST_MS:
                    undated[composer] = undated.get(composer, 0) + 1
                    if created is None and ts is None:  # no time at all: maybe inferred
                        self._pend(composer, rowid, key, typ, req, tin, tout, model, text, langs)
                        continue
                elif created < floor_iso:
                    before += 1
                elif budget_hit or rowid < low:
                    pass
                elif room <= 0:
                    budget_hit = True
                else:
                    room -= 1
                    kept += 1
                    if text is None:
                        chars = 0
                    elif type(text) is int:  # counted already (`older_rows`)
                        chars = text
                    elif text.isascii():
                        chars = len(text)
                    else:
                        chars = len(text.decode("utf-8", "replace"))
                    # tuple.__new__ makes the same Bubble without the Python-level call of the
                    # class's constructor (one per kept row).
                    bubble = _new_tuple(
                        Bubble,
                        (
                            rowid,
                            key,
                            typ,
                            ts,
                            (tin if type(tin) is int and tin > 0 else 0) if tin else 0,
                            (tout if type(tout) is int and tout > 0 else 0) if tout else 0,
                            # One string per model name and language list, not one a row:
                            # every kept bubble is held until the conversations are installed.
                            intern(model) if type(model) is str and model else None,
                            chars,
                            intern(langs) if type(langs) is str else langs,
                            req if type(req) is str and req else None,
                        ),
                    )
                    group = bubbles.get(composer)
                    if group is None:
                        bubbles[composer] = [bubble]
                    else:
                        group.append(bubble)
                    continue
                seen = unkept_by.get(composer)
                if seen is None:
                    seen = unkept_by[composer] = array("q")
                seen.append(rowid)
            if type(req) is str and req:
                other.add(req)
        self.kept += kept
        self.budget_hit = budget_hit
        return kept, before

    def _pend(self, composer: str, *row: Any) -> None:
        rowid, key, typ, req, tin, tout, model, text, langs = row
        chars = text_chars(text)
        bubble = Bubble(
            rowid, key, typ, 0,
            tin if type(tin) is int and tin > 0 else 0,
            tout if type(tout) is int and tout > 0 else 0,
            model if type(model) is str and model else None,
            chars, langs, req if type(req) is str and req else None,
        )  # fmt: skip
        self.pending.setdefault(composer, []).append(bubble)

    def date_undated(self, times: dict[str, tuple[Any, Any]]) -> None:
        """Date each conversation's undated bubbles from its composerData times: spread evenly
        from `createdAt` to `lastUpdatedAt` in ROWID order, else all at `createdAt`
        (docs/local-data.md#window-and-scan-budget); they are then kept like dated ones (floor,
        budget). A conversation without a usable `createdAt` keeps them undated."""
        floor_ms = parse_iso_ms(self.floor_iso) or 0
        for composer, rows in self.pending.items():
            created, updated = times.get(composer, (None, None))
            lo, hi = valid_ms(created), valid_ms(updated)
            rows.sort(key=_ROWID)
            n = len(rows)
            spread = lo is not None and hi is not None and hi > lo and n > 1
            for i, bubble in enumerate(rows):
                if lo is None:  # nothing dates it: stays undated (counted in `add`)
                    self._unkeep(composer, bubble)
                    continue
                ts = lo + (hi - lo) * i // (n - 1) if spread and hi is not None else lo
                self.undated[composer] -= 1
                room = self.budget is None or self.kept < self.budget
                if (
                    ts < floor_ms
                    or not room
                    or (self.cutoff is not None and bubble.rowid < self.cutoff)
                ):
                    self._unkeep(composer, bubble)
                    continue
                self.kept += 1
                self.inferred[composer] = self.inferred.get(composer, 0) + 1
                self.bubbles.setdefault(composer, []).append(bubble._replace(ts=ts))
            if not self.undated[composer]:
                del self.undated[composer]
        self.pending.clear()

    def _unkeep(self, composer: str, bubble: Bubble) -> None:
        self.unkept.setdefault(composer, array("q")).append(bubble.rowid)
        if bubble.request_id is not None:
            self.other_requests.add(bubble.request_id)
