"""What a read needs to know of each part of its calls, kept per part between reads.

A read's calls come in parts: one list per conversation a reader keeps (the IDE reader's
bubbles of one composer, a decoded root's calls, a transcript's), and a long-lived reader
hands the same list object again while that conversation did not change. Facts of a part —
its time span, its runs of one session, its sessions and projects — are worked out once per
list object, so a refresh after one appended conversation costs that conversation, not every
call again (a large read has ~100k calls, and every pass over them adds to a refresh). Parts
must never be
modified once read.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from operator import attrgetter
from typing import Final, NamedTuple

from codeburn.providers.calls import Call

_SESSION: Final = attrgetter("session")
_TIME: Final = attrgetter("timestamp_ms")
_MODEL: Final = attrgetter("model")
_PROJECT: Final = attrgetter("project")


class Run(NamedTuple):
    """One run of calls of one session."""

    session: str
    first: Call  # its first call
    models: tuple[str, ...]  # in order
    first_ms: int  # its first and last call time
    last_ms: int


class PartFacts:
    """The facts of one non-empty part (the runs at once, the rest when asked)."""

    __slots__ = ("_projects", "_sessions", "_starts", "hi", "lo", "part", "runs")

    def __init__(self, part: list[Call]) -> None:
        self.part = part
        runs: list[Run] = []
        for session, run in groupby(part, key=_SESSION):
            group = list(run)
            times = list(map(_TIME, group))
            models = tuple(dict.fromkeys(map(_MODEL, group)))
            runs.append(Run(session, group[0], models, min(times), max(times)))
        self.runs = runs
        self.lo = min(r.first_ms for r in runs)
        self.hi = max(r.last_ms for r in runs)
        self._sessions: frozenset[str] | None = None
        self._projects: frozenset[str] | None = None
        self._starts: dict[str, frozenset[str]] = {}

    @property
    def sessions(self) -> frozenset[str]:
        if self._sessions is None:
            self._sessions = frozenset(r.session for r in self.runs)
        return self._sessions

    @property
    def projects(self) -> frozenset[str]:
        if self._projects is None:
            self._projects = frozenset(map(_PROJECT, self.part))
        return self._projects

    def sessions_keyed(self, prefix: str) -> frozenset[str]:
        """The sessions of calls whose key starts with `prefix`."""
        found = self._starts.get(prefix)
        if found is None:
            found = self._starts[prefix] = frozenset(
                c.session for c in self.part if c.key.startswith(prefix)
            )
        return found


class PartMemo:
    """`PartFacts` of each part, kept while the part is in use (`done` drops the others)."""

    def __init__(self) -> None:
        self._last: dict[int, PartFacts] = {}
        self._now: dict[int, PartFacts] = {}

    def facts(self, part: list[Call]) -> PartFacts:
        key = id(part)
        kept = self._now.get(key)
        if kept is None or kept.part is not part:
            kept = self._last.get(key)
            if kept is None or kept.part is not part:
                kept = PartFacts(part)
            self._now[key] = kept
        return kept

    def all(self, parts: Iterable[list[Call]]) -> list[PartFacts]:
        return [self.facts(p) for p in parts if p]

    def done(self) -> None:
        """Keep only the facts of the parts used since the last `done`."""
        self._last, self._now = self._now, {}


def since(parts: Iterable[PartFacts], floor_ms: int) -> list[Call]:
    """The calls at or after `floor_ms`, in order."""
    out: list[Call] = []
    for facts in parts:
        if facts.lo >= floor_ms:
            out.extend(facts.part)
        elif facts.hi >= floor_ms:
            out.extend([c for c in facts.part if c.timestamp_ms >= floor_ms])
    return out
