"""What this machine knows of each local conversation, for attributing exact events (SPEC §2.7).

A `LocalConversation` is one conversation id with its project, title, provider, the models its
calls were priced under and its turns: the spans from a user message's recorded time to its
last recorded reply. Only recorded times make a turn — never the dates inferred for older
builds (spread between a conversation's start and last update) nor a file's first-seen time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import groupby
from operator import attrgetter
from typing import Any, Final

from codeburn.providers.agent import Turn
from codeburn.providers.calls import CURSOR, CURSOR_AGENT, Call

LOCAL_PROVIDERS: Final = frozenset({CURSOR, CURSOR_AGENT})
STREAM_ONLY_PREFIX: Final = "cursor:agentKv:"  # a request of no known conversation
_SESSION: Final = attrgetter("session")
_TIME: Final = attrgetter("timestamp_ms")
_MODEL: Final = attrgetter("model")


@dataclass(frozen=True, slots=True)
class LocalConversation:
    """One local conversation (IDE composer, Cursor Agent CLI session, transcript)."""

    id: str
    project: str
    provider: str
    title: str | None = None
    models: tuple[str, ...] = ()
    turns: tuple[Turn, ...] = ()
    first_ms: int = 0  # its first and last local call
    last_ms: int = 0

    def turns_since(self, ms: int) -> LocalConversation:
        """Itself with only the turns that end at or after `ms` (what a cache of today keeps)."""
        kept = tuple(t for t in self.turns if t[1] >= ms)
        return self if len(kept) == len(self.turns) else replace(self, turns=kept)

    def to_row(self) -> list[Any]:
        return [
            self.id,
            self.project,
            self.provider,
            self.title,
            list(self.models),
            [list(t) for t in self.turns],
            self.first_ms,
            self.last_ms,
        ]

    @classmethod
    def from_row(cls, row: list[Any]) -> LocalConversation:
        """Inverse of `to_row`; raises on a malformed row (callers treat that as a miss)."""
        cid, project, provider, title, models, turns, first, last = row
        return cls(
            str(cid),
            str(project),
            str(provider),
            None if title is None else str(title),
            tuple(str(m) for m in models),
            tuple((int(a), int(b), None if m is None else str(m)) for a, b, m in turns),
            int(first),
            int(last),
        )


def local_conversations(
    calls: Iterable[Call],
    turns: Mapping[str, tuple[Turn, ...]],
    titles: Mapping[str, str],
) -> dict[str, LocalConversation]:
    """Every conversation of the local calls (their session ids), with what the readers know
    of it. Agent-stream-only requests (no conversation of their own) are left out."""
    seen: dict[str, tuple[str, str, dict[str, None], list[int]]] = {}
    # Calls come in runs of one conversation: a refresh goes through ~100k of them (~30 ms).
    for session, run in groupby(calls, key=_SESSION):
        group = list(run)
        first = group[0]
        if first.provider not in LOCAL_PROVIDERS or first.key.startswith(STREAM_ONLY_PREFIX):
            continue
        times = list(map(_TIME, group))
        lo, hi = min(times), max(times)
        models = dict.fromkeys(map(_MODEL, group))
        entry = seen.get(session)
        if entry is None:
            seen[session] = (first.project, first.provider, models, [lo, hi])
        else:
            entry[2].update(models)
            span = entry[3]
            span[0], span[1] = min(span[0], lo), max(span[1], hi)
    return {
        cid: LocalConversation(
            cid,
            project,
            provider,
            titles.get(cid),
            tuple(models),
            tuple(sorted(turns.get(cid, ()))),
            span[0],
            span[1],
        )
        for cid, (project, provider, models, span) in seen.items()
    }
