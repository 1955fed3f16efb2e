"""Exact (imported or synced) events → the local conversation they belong to (docs/attribution.md).

In order: (a) the event's `conversationId` is a local conversation's id → that conversation;
(b) no id: the event's time falls inside one local turn (recorded times, user message − 2 s to
the last reply + 2 s) of exactly one conversation whose model agrees → that conversation, two
or more equally plausible → unattributed; (c) an id no local file knows → other machines and
cloud agents. Guard: when over the window no event id matches any local conversation although
local conversations exist, the ids are of another namespace: those events are time-matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from codeburn.providers import (
    CURSOR,
    CURSOR_AGENT,
    OTHER_MACHINES_PROJECT,
    Call,
    LocalConversation,
    base_model,
)

BY_ID: Final = "byId"
BY_TIME: Final = "byTime"
OTHER_MACHINES: Final = "otherMachines"
UNATTRIBUTED: Final = "unattributed"
KINDS: Final = (BY_ID, BY_TIME, OTHER_MACHINES, UNATTRIBUTED)
SLACK_MS: Final = 2_000
BUCKET_MS: Final = 60_000
ATTRIBUTED_PROVIDERS: Final = frozenset({CURSOR, CURSOR_AGENT})
AUTO: Final = "cursor-auto"
# How well an event's model agrees with a turn's: the same base model beats "either is auto".
SAME_MODEL: Final = 2
EITHER_AUTO: Final = 1


_base: Final = lru_cache(maxsize=4096)(base_model)


def agreement(event_model: str, turn_model: str) -> int:
    """0 when the two models disagree (docs/attribution.md: one priced base model, or either is
    auto)."""
    a, b = _base(event_model), _base(turn_model)
    if AUTO in (a, b):
        return EITHER_AUTO
    return SAME_MODEL if a == b else 0


class TurnIndex:
    """The local turns by minute, to find the turns a time falls inside."""

    def __init__(self, conversations: Iterable[LocalConversation]) -> None:
        self._buckets: dict[int, list[tuple[int, int, str, tuple[str, ...]]]] = {}
        for conv in conversations:
            for start, end, model in conv.turns:
                lo, hi = start - SLACK_MS, end + SLACK_MS
                models = (model,) if model else conv.models
                entry = (lo, hi, conv.id, models)
                for bucket in range(lo // BUCKET_MS, hi // BUCKET_MS + 1):
                    self._buckets.setdefault(bucket, []).append(entry)

    def match(self, ts: int, model: str) -> str | None:
        """The one conversation whose turn holds `ts` and agrees best with `model`, else None."""
        best: dict[str, int] = {}
        for lo, hi, cid, models in self._buckets.get(ts // BUCKET_MS, ()):
            if lo <= ts <= hi:
                rank = max((agreement(model, m) for m in models), default=EITHER_AUTO)
                if rank > best.get(cid, 0):
                    best[cid] = rank
        if not best:
            return None
        top = max(best.values())
        winners = [cid for cid, rank in best.items() if rank == top]
        return winners[0] if len(winners) == 1 else None


@dataclass(slots=True)
class Attributed:
    """One event after attribution: the call relabelled (project, provider, session) and how."""

    call: Call
    kind: str  # one of KINDS, or "" for events attribution does not concern (Grok Bot, API key)
    conversation: LocalConversation | None = None


@dataclass(slots=True)
class Attributor:
    """Attributes exact events to the local conversations."""

    conversations: Mapping[str, LocalConversation]
    notes: list[str] = field(default_factory=list)

    def run(
        self, events: Iterable[tuple[Call, str]], ids: Iterable[tuple[int, str]]
    ) -> Iterator[Attributed]:
        """`events`: (call, conversationId or "") of Cursor and Cursor Agent events, streamed;
        `ids`: (time, conversationId) of the window's events that carry one (the guard looks
        at them all before the first event is attributed)."""
        with_ids = list(ids)
        ignore_ids = other_namespace(with_ids, self.conversations)
        if ignore_ids:
            self.notes.append(
                f"the conversation ids of {len(with_ids)} synced events match none of this "
                "machine's conversations in the same period: they were treated as another kind "
                "of id and the events matched by time instead"
            )
        index: TurnIndex | None = None  # built for the first event without an id
        convs = self.conversations
        for call, cid in events:
            if cid and not ignore_ids:
                conv = convs.get(cid)
                if conv is not None:
                    yield Attributed(_as_of(call, conv), BY_ID, conv)
                else:
                    other = _relabel(call, OTHER_MACHINES_PROJECT, call.provider, cid)
                    yield Attributed(other, OTHER_MACHINES)
                continue
            if index is None:
                index = TurnIndex(convs.values())
            found = index.match(call.timestamp_ms, call.model)
            if found is None:
                yield Attributed(call, UNATTRIBUTED)
            else:
                conv = convs[found]
                yield Attributed(_as_of(call, conv), BY_TIME, conv)


def other_namespace(
    with_ids: Sequence[tuple[int, str]], conversations: Mapping[str, LocalConversation]
) -> bool:
    """docs/attribution.md's guard: ids were given, local conversations exist over their span,
    and not one id is a local conversation's. `with_ids` are the whole window's, never one
    period's, so that the answer does not depend on the period asked."""
    if not with_ids or any(cid in conversations for _, cid in with_ids):
        return False
    lo = min(ts for ts, _ in with_ids)
    hi = max(ts for ts, _ in with_ids)
    return any(c.first_ms <= hi and c.last_ms >= lo for c in conversations.values())


def _as_of(call: Call, conv: LocalConversation) -> Call:
    return _relabel(call, conv.project, conv.provider, conv.id)


def _relabel(call: Call, project: str, provider: str, session: str) -> Call:
    """`replace(call, …)`, inlined for speed (an account syncs ~100k events a month)."""
    c = call
    return Call(
        c.key, provider, c.model, project, session, c.timestamp_ms, c.input_tokens,
        c.output_tokens, c.cache_read_tokens, c.cache_write_tokens, c.cost, c.estimated,
        c.billed, c.priced, c.tools, c.commands, c.not_charged, c.cursor_fee,
    )  # fmt: skip


def cursors_own(conversations: Mapping[str, LocalConversation]) -> dict[str, LocalConversation]:
    """Only Cursor's own conversations can be an exact event's (other tools' sessions are
    listed with them, never attributed to, nor counted by the namespace guard)."""
    return {cid: c for cid, c in conversations.items() if c.provider in ATTRIBUTED_PROVIDERS}


def attribute(
    events: Iterable[tuple[Call, str]],
    conversations: Mapping[str, LocalConversation] | None,
    notes: list[str] | None = None,
    *,
    ids: Iterable[tuple[int, str]] | None = None,
) -> Iterator[Attributed]:
    """Every event, attributed; with no local knowledge at all (`None`: the local sources were
    not read), events keep their imported project and count as unattributed. `ids`: (time,
    conversationId) of the window's events that carry one (the guard's evidence; else those
    of `events`, which is then held in memory once)."""
    if conversations is None:
        for call, _cid in events:
            kind = UNATTRIBUTED if call.provider in ATTRIBUTED_PROVIDERS else ""
            yield Attributed(call, kind)
        return
    if ids is None:
        events = list(events)
        ids = [(c.timestamp_ms, cid) for c, cid in events if cid]
    attributor = Attributor(cursors_own(conversations))
    others: list[Call] = []

    def split() -> Iterator[tuple[Call, str]]:
        for call, cid in events:
            if call.provider in ATTRIBUTED_PROVIDERS:
                yield call, cid
            else:
                others.append(call)

    yield from attributor.run(split(), ids)
    for call in others:
        yield Attributed(call, "")
    if notes is not None:
        notes.extend(attributor.notes)
