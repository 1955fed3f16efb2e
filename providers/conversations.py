"""What this machine knows of each local conversation, for attributing exact events
(docs/attribution.md).

A `LocalConversation` is one conversation id with its project, title, provider, the models its
calls were priced under and its turns: the spans from a user message's recorded time to its
last recorded reply. Only recorded times make a turn — never the dates inferred for older
builds (spread between a conversation's start and last update) nor a file's first-seen time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

from codeburn.providers.calls import CURSOR, CURSOR_AGENT, Call
from codeburn.providers.parts import PartFacts, Run

LOCAL_PROVIDERS: Final = frozenset({CURSOR, CURSOR_AGENT})
STREAM_ONLY_PREFIX: Final = "cursor:agentKv:"  # a request of no known conversation


class Turn(NamedTuple):
    """A turn for attribution: its recorded span and model (what the decoders give)."""

    start_ms: int  # its first recorded time
    end_ms: int  # its last recorded time
    model: str | None


class LocalConversation(NamedTuple):
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
        kept = tuple(t for t in self.turns if t.end_ms >= ms)
        if len(kept) == len(self.turns):
            return self
        return LocalConversation(
            self.id, self.project, self.provider, self.title, self.models, kept,
            self.first_ms, self.last_ms,
        )  # fmt: skip

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
            tuple(Turn(int(a), int(b), None if m is None else str(m)) for a, b, m in turns),
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
    part = list(calls)
    facts = [PartFacts(part)] if part else []
    return ConversationMemo().build(facts, turns, titles)


class _Made(NamedTuple):
    """A conversation made, and what it was made of."""

    run: Run
    turns: tuple[Turn, ...]
    title: str | None
    conversation: LocalConversation


class ConversationMemo:
    """`local_conversations` of a read's parts, each conversation made again only when what it
    is made of changed (otherwise a refresh makes them all again, and new objects every cache
    and encoding after it has to look at again)."""

    def __init__(self) -> None:
        self._made: dict[str, _Made] = {}

    def build(
        self,
        parts: Iterable[PartFacts],
        turns: Mapping[str, tuple[Turn, ...]],
        titles: Mapping[str, str],
    ) -> dict[str, LocalConversation]:
        seen: dict[str, Run] = {}
        for facts in parts:
            for run in facts.runs:
                first = run.first
                if first.provider not in LOCAL_PROVIDERS or first.key.startswith(
                    STREAM_ONLY_PREFIX
                ):
                    continue
                entry = seen.get(run.session)
                seen[run.session] = run if entry is None else _joined(entry, run)
        before = self._made
        made: dict[str, _Made] = {}
        out: dict[str, LocalConversation] = {}
        for cid, run in seen.items():
            raw = turns.get(cid, ())
            title = titles.get(cid)
            kept = before.get(cid)
            # The same run object: the same part, so the same calls (a joined run is new).
            if kept is None or not (
                (kept.run is run or kept.run == run) and kept.turns == raw and kept.title == title
            ):
                _, first, models, lo, hi = run
                conv = LocalConversation(
                    cid, first.project, first.provider, title, models, tuple(sorted(raw)), lo, hi
                )
                kept = _Made(run, raw, title, conv)
            made[cid] = kept
            out[cid] = kept.conversation
        self._made = made
        return out


def _joined(a: Run, b: Run) -> Run:
    """One session's runs in two places: the first's call, every model once, the whole span."""
    models = tuple(dict.fromkeys(a.models + b.models))
    return Run(a.session, a.first, models, min(a.first_ms, b.first_ms), max(a.last_ms, b.last_ms))
