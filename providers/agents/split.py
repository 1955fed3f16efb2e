"""A large first read of the other tools' logs split across two processes: which files the
second one reads, and how their entries come back (`ToolLogs._read_changed`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final, cast

from codeburn.providers.agents.logs import LogFile
from codeburn.providers.agents.state import KeptLog, Part, ToolStore
from codeburn.providers.agents.taking import Changes
from codeburn.providers.runtime import AsideParts

SHIP_PARTS: Final = 8  # a second process sends a log's parts this many at a time

Changed = tuple[str, LogFile, KeptLog | None]  # a file to read: key, where, what was kept


def new_bytes(item: Changed) -> int:
    _, file, old = item
    return max(0, file.ident[0] - (old.offset if old else 0))


def halves(changed: list[Changed]) -> tuple[list[Changed], list[Changed]]:
    """Two lists of about equal new bytes (each file to the lighter, largest first)."""
    halves: tuple[list[Changed], list[Changed]] = ([], [])
    sizes = [0, 0]
    for item in sorted(changed, key=new_bytes, reverse=True):
        lighter = 0 if sizes[0] <= sizes[1] else 1
        halves[lighter].append(item)
        sizes[lighter] += new_bytes(item)
    return halves


Shipped = tuple[str, KeptLog | None, tuple[Part, ...] | None]


ReadFile = Callable[[str, LogFile, KeptLog | None, list[str], int | None], KeptLog | None]


def shipped(
    read_file: ReadFile,
    store: ToolStore | None,
    files: list[Changed],
    low: int | None,
    send: Callable[[object], None],
    *,
    saves: bool,
) -> None:
    """(In the second process) each file read, sent as it is: its entry with its records as
    the JSON texts of parts (a few C calls to send and take back, where pickling them would
    be one per object); then the problems met. `saves` (a command's read): a Claude Code log
    read whole has its change saved here, and its parts follow its entry a few at a time
    (None, then tuples of parts, then an empty one), so that neither process holds a large
    log's records whole."""
    problems: list[str] = []
    changes = Changes(store)
    for key, file, old in files:
        entry = read_file(key, file, old, problems, low)
        parts: tuple[Part, ...] = ()
        if entry is not None:
            parts = entry.held_parts()
            entry.set_texts(())
        if not (saves and entry is not None and entry.claude is not None and entry.stored is None):
            send((key, entry, parts))
            continue
        changes.add(entry.shipped_change(key, parts))
        entry.loaded = False
        send((key, entry, None))
        for start in range(0, len(parts), SHIP_PARTS):
            send(parts[start : start + SHIP_PARTS])
        send(())
    changes.save()
    send(problems)


def sent_parts(aside: AsideParts) -> Iterator[Part]:
    """The parts `shipped` sends after a log's entry."""
    while parts := cast(tuple[Part, ...], aside.next()):
        yield from parts


def unpacked(entry: KeptLog | None, parts: tuple[Part, ...]) -> KeptLog | None:
    """An entry `_shipped` sent, its records made again."""
    if entry is not None:
        entry.set_texts(part.text or "[]" for part in parts)
    return entry
