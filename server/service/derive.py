"""Local calls + imported events → per-day slices, with replacement inside coverage
(docs/import.md#replacement)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Final, NamedTuple

from codeburn.cache import (
    ConversationHead,
    CoverageIndex,
    DaySlices,
    GroupSums,
    ImportSnapshot,
    Slice,
    iter_calls,
    iter_conversation_events,
    iter_conversation_ids,
    iter_events,
)
from codeburn.providers import (
    CLAUDE_CODE,
    CODEX,
    CURSOR,
    CURSOR_AGENT,
    GROKBOT,
    OTHER_MACHINES_PROJECT,
    Call,
    DayIndex,
    LocalConversation,
    gc_paused,
    is_user_api_key,
    local_midnight_ms,
    normalise_model,
)
from codeburn.server.service.attribution import (
    ATTRIBUTED_PROVIDERS,
    BY_ID,
    BY_TIME,
    KINDS,
    OTHER_MACHINES,
    attribute,
    cursors_own,
    other_namespace,
)

CONVERSATION_PROVIDERS: Final = frozenset({CURSOR, CURSOR_AGENT, CLAUDE_CODE, CODEX})
# Exact events that belong to a conversation (an unattributed one belongs to none).
CONVERSATION_KINDS: Final = frozenset({BY_ID, BY_TIME, OTHER_MACHINES})

ONE_DAY = timedelta(days=1)


# A group: calls of one day, provider, model, project and session with the same flags, and
# for exact events how they were attributed ("" for local calls).
class GroupKey(NamedTuple):
    day: date
    provider: str
    model: str
    project: str
    session: str
    estimated: bool
    billed: bool
    priced: bool
    local: bool
    kind: str  # how an exact event was attributed; LOCAL for a local call


LOCAL: Final = ""
NEVER: Final = 2**62  # no end: every call of [first, last] counts


class _Grouper:
    """Sums calls into groups; a report has thousands of groups for a hundred thousand calls."""

    def __init__(self, index: DayIndex, first: date, last: date, end_ms: int = NEVER) -> None:
        self.index, self.first, self.last = index, first, last
        self.groups: dict[GroupKey, GroupSums] = {}
        self._end = end_ms
        self._lo = self._hi = 0
        self._day: date | None = None

    def day_of(self, ms: int) -> date | None:
        """The local day `ms` counts on: None outside [first, last] or from `end_ms` on."""
        if not self._lo <= ms < self._hi:  # calls come in runs of one conversation, mostly a day
            end = self._end
            if ms >= end:
                self._lo, self._hi, self._day = end, NEVER, None
            else:
                day = self.index.day_of(ms)
                self._lo = local_midnight_ms(day)
                self._hi = min(local_midnight_ms(day + ONE_DAY), end)
                self._day = day if self.first <= day <= self.last else None
        return self._day

    def add_local(self, calls: Iterable[Call], coverage: CoverageIndex | None) -> None:
        """`add(call, True, LOCAL)` for each call an import does not cover: the loop over every
        local call of a read, which keeps the last call's group (below) instead of making each
        call's key."""
        groups, day_of = self.groups, self.day_of
        covers = coverage.covers if coverage else None
        lo, hi, day = 0, 0, None
        # The last call's group, and what its key is made of: the next call of the same run
        # (one conversation, one model: most calls) adds to it without a key of its own. The
        # same objects mean the same key; equal ones not the same go the long way.
        sums: GroupSums | None = None
        session: object = None
        model: object = None
        project: object = None
        provider: object = None
        est: object = None
        billed: object = None
        priced: object = None
        for call in calls:
            ms = call.timestamp_ms
            if covers is not None and covers(call.provider, ms):
                continue
            if not lo <= ms < hi:
                day = day_of(ms)
                lo, hi = self._lo, self._hi
                sums = None
            if day is None:
                continue
            if not (
                sums is not None
                and call.session is session
                and call.model is model
                and call.project is project
                and call.provider is provider
                and call.estimated is est
                and call.billed is billed
                and call.priced is priced
            ):
                session, model, project = call.session, call.model, call.project
                provider, est = call.provider, call.estimated
                billed, priced = call.billed, call.priced
                key = GroupKey(
                    day, provider, model, project, session, est, billed, priced, True, LOCAL
                )
                sums = groups.get(key)
                if sums is None:
                    sums = groups[key] = GroupSums.of(call)
                    continue
            sums.take(call)

    def add(self, call: Call, local: bool, kind: str) -> None:
        ms = call.timestamp_ms
        day = self.day_of(ms)
        if day is None:
            return
        key = GroupKey(
            day,
            call.provider,
            call.model,
            call.project,
            call.session,
            call.estimated,
            call.billed,
            call.priced,
            local,
            kind,
        )
        sums = self.groups.get(key)
        if sums is None:
            # (the exact events' token fee)
            self.groups[key] = GroupSums.of(call, 0.0 if local else call.cursor_fee)
        else:
            sums.take(call)
            if not local:
                sums.cursor_fee += call.cursor_fee


def derive_days(
    first: date,
    last: date,
    local_calls: Iterable[Call],
    snapshot: ImportSnapshot | None,
    conversations: Mapping[str, LocalConversation] | None = None,
    notes: list[str] | None = None,
    *,
    window_from: date | None = None,
    end_ms: int | None = None,
) -> dict[date, DaySlices]:
    """Slices of every local day in [first, last]; local calls covered by an import give way,
    and the stored exact events are attributed to the local `conversations` (None: the local
    sources were not read, the events stay unattributed). `notes` gets what attribution says.

    `window_from`: the first day of the window attribution is decided over (the namespace
    guard sees the ids of every stored event from it to `last`), else `first`. `end_ms`: calls
    from then on count on no day (the status counts up to its clock, docs/forecast.md)."""
    index = DayIndex(first, last)
    coverage = CoverageIndex.from_snapshot(snapshot) if snapshot is not None else None
    grouper = _Grouper(index, first, last, NEVER if end_ms is None else end_ms)
    with gc_paused():
        grouper.add_local(local_calls, coverage)
        if snapshot is not None and snapshot.events:
            lo, hi = local_midnight_ms(first), local_midnight_ms(last + ONE_DAY)
            events = (e for e in iter_events(snapshot) if lo <= e[0].timestamp_ms < hi)
            ids = window_ids(snapshot, min(first, window_from or first), last)
            for done in attribute(events, conversations, notes, ids=ids):
                grouper.add(done.call, False, done.kind)
    return _slices(grouper.groups, conversations or {})


def _slices(
    groups: dict[GroupKey, GroupSums], conversations: Mapping[str, LocalConversation]
) -> dict[date, DaySlices]:
    days: dict[date, DaySlices] = {}
    for key, sums in groups.items():
        day, provider, model, project, session, est, billed, priced, local, kind = key
        slices = days.get(day)
        if slices is None:
            slices = days[day] = {}
        part = slices.get(provider)
        if part is None:
            part = slices[provider] = Slice()
        part.add_group(provider, model, project, session, est, billed, priced, sums, local=local)
        if kind in KINDS:
            part.add_attribution(kind, sums.calls, sums.cost)
        if (local and provider in CONVERSATION_PROVIDERS) or kind in CONVERSATION_KINDS:
            conv = conversations.get(session)
            head = (conv.title if conv is not None else None, project, provider)
            part.add_conversation(session, head, model, (est, billed), sums)
    return days


def window_ids(snapshot: ImportSnapshot, first: date, last: date) -> list[tuple[int, str]]:
    """(time, conversationId) of the stored events of [first, last] that carry one."""
    lo, hi = local_midnight_ms(first), local_midnight_ms(last + ONE_DAY)
    return [(ms, cid) for ms, cid in iter_conversation_ids(snapshot) if lo <= ms < hi]


@dataclass(slots=True)
class Sealed:
    """What the sealed days of the window hold for attribution (docs/attribution.md): their
    local conversations (id, project, provider, title, models, span; no turns), and per day
    the events matched by id (to this machine or to other machines) and the ids sent to other
    machines."""

    conversations: dict[str, LocalConversation] = field(default_factory=dict)
    by_id: dict[date, int] = field(default_factory=dict)
    elsewhere: dict[date, list[str]] = field(default_factory=dict)


@dataclass(slots=True)
class _Head:
    """A conversation over the sealed days: its first head's title (else a later one's),
    project and provider, every model, its whole span."""

    title: str | None
    project: str
    provider: str
    models: dict[str, None]  # in the order first seen
    first_ms: int
    last_ms: int

    @classmethod
    def of(cls, head: ConversationHead) -> _Head:
        models = dict.fromkeys(head.models)
        return cls(head.title, head.project, head.provider, models, head.first_ms, head.last_ms)


def sealed_evidence(days: Mapping[date, DaySlices]) -> Sealed:
    """One pass over the sealed days' slices; an "Other machines" entry is no local
    conversation."""
    out = Sealed()
    heads: dict[str, _Head] = {}
    for day, slices in days.items():
        by_id = 0
        for provider in ATTRIBUTED_PROVIDERS:
            part = slices.get(provider)
            if part is None:
                continue
            split = part.attribution
            by_id += sum(int(split[k][0]) for k in (BY_ID, OTHER_MACHINES) if k in split)
            for seen in part.conversation_heads():
                cid = seen.id
                if seen.project == OTHER_MACHINES_PROJECT:
                    out.elsewhere.setdefault(day, []).append(cid)
                    continue
                head = heads.get(cid)
                if head is None:
                    heads[cid] = _Head.of(seen)
                    continue
                head.title = head.title or seen.title
                head.models.update(dict.fromkeys(seen.models))
                head.first_ms = min(head.first_ms, seen.first_ms)
                head.last_ms = max(head.last_ms, seen.last_ms)
        out.by_id[day] = by_id
    out.conversations = {
        cid: LocalConversation(
            cid, h.project, h.provider, h.title, tuple(h.models), (), h.first_ms, h.last_ms
        )
        for cid, h in heads.items()
    }
    return out


def stale_days(
    sealed: Sealed,
    snapshot: ImportSnapshot | None,
    conversations: Mapping[str, LocalConversation] | None,
    window: tuple[date, date],
) -> list[date]:
    """The sealed days whose attribution the evidence now contradicts, to derive again
    (docs/attribution.md): the namespace guard, decided over `window`, now says otherwise than
    when the day was sealed, or an id sent to other machines is now a local conversation's. A
    conversation whose files are gone changes nothing (its sealed days keep it)."""
    if snapshot is None or not snapshot.events or conversations is None or not sealed.by_id:
        return []
    own = cursors_own(conversations)
    first, last = window
    ignore_ids = other_namespace(window_ids(snapshot, first, last), own)
    days = sorted(sealed.by_id)
    with_ids = {} if ignore_ids else _attributable_ids_by_day(snapshot, days[0], days[-1])
    return [
        day
        for day in days
        if sealed.by_id[day] != with_ids.get(day, 0)
        or any(cid in own for cid in sealed.elsewhere.get(day, ()))
    ]


def _attributable_ids_by_day(snapshot: ImportSnapshot, first: date, last: date) -> dict[date, int]:
    """Per local day in [first, last], the stored events attribution would match by id: those
    with a `conversationId` of Cursor's own (as `row_to_call` tells Grok Bot and User API Key
    rows apart)."""
    index = DayIndex(first, last)
    lo, hi = local_midnight_ms(first), local_midnight_ms(last + ONE_DAY)
    counts: dict[date, int] = {}
    cursors: dict[str, bool] = {}  # Model cell → whether it is Cursor's (a few distinct ones)
    for ms, _cid, model, kind, billing in iter_conversation_events(snapshot):
        if not lo <= ms < hi:
            continue
        api_key = is_user_api_key(kind) if billing is None else billing == "user-api-key"
        cursor = cursors.get(model)
        if cursor is None:
            cursor = cursors[model] = normalise_model(model)[0] in ATTRIBUTED_PROVIDERS
        if api_key or not cursor:
            continue
        day = index.day_of(ms)
        counts[day] = counts.get(day, 0) + 1
    return counts


def import_marks(first: date, last: date, snapshot: ImportSnapshot | None) -> dict[date, list[str]]:
    """Per local day in [first, last], the providers whose slices hold stored (imported or
    synced) events or gave way to a coverage range: what `--remove` must clean (docs/caches.md)."""
    if snapshot is None or (not snapshot.ranges and not snapshot.events) or last < first:
        return {}
    index = DayIndex(first, last)
    marks: dict[date, set[str]] = {}
    for call in iter_calls(snapshot):  # one at a time: a large store never becomes a list
        day = index.day_of(call.timestamp_ms)
        if first <= day <= last:
            marks.setdefault(day, set()).add(call.provider)
    replaced = {CURSOR, CURSOR_AGENT} | ({GROKBOT} if snapshot.has_grokbot else set())
    for r in snapshot.ranges:
        day = max(first, index.day_of(r.start_ms))
        end = min(last, index.day_of(r.end_ms))
        while day <= end:
            marks.setdefault(day, set()).update(replaced)
            day += ONE_DAY
    return {day: sorted(providers) for day, providers in marks.items()}
