"""Per-day, per-provider usage totals: what the daily cache stores and reports add up."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from codeburn.providers import CURSOR, CURSOR_AGENT, Call

LOCAL_ESTIMATE_PROVIDERS = frozenset({CURSOR, CURSOR_AGENT})


class ConversationHead(NamedTuple):
    """A conversation in a slice, without its totals (what attribution needs of a sealed day)."""

    id: str
    title: str | None
    project: str
    provider: str
    models: tuple[str, ...]
    first_ms: int  # its first and last call time
    last_ms: int


@dataclass(slots=True)
class GroupSums:
    """The figures of calls that share everything else (a day, provider, model, project,
    session and flags: `Slice.add_group`), summed as they come."""

    cost: float
    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    not_charged: int  # calls Cursor did not charge
    first_ms: int  # the first and last call time
    last_ms: int
    cursor_fee: float = 0.0  # exact events only: Cursor's token fee

    @classmethod
    def of(cls, call: Call, cursor_fee: float = 0.0) -> GroupSums:
        """The sums of `call` alone."""
        ms = call.timestamp_ms
        return cls(
            call.cost, 1, call.input_tokens, call.output_tokens, call.cache_read_tokens,
            call.cache_write_tokens, 1 if call.not_charged else 0, ms, ms, cursor_fee,
        )  # fmt: skip

    def take(self, call: Call) -> None:
        """Add `call` (its token fee apart: exact events only)."""
        self.cost += call.cost
        self.calls += 1
        self.input_tokens += call.input_tokens
        self.output_tokens += call.output_tokens
        self.cache_read_tokens += call.cache_read_tokens
        self.cache_write_tokens += call.cache_write_tokens
        if call.not_charged:
            self.not_charged += 1
        ms = call.timestamp_ms
        if ms < self.first_ms:
            self.first_ms = ms
        elif ms > self.last_ms:
            self.last_ms = ms


@dataclass(slots=True)
class Totals:
    """Sums over calls; `sessions` keeps ids so periods count distinct sessions."""

    cost: float = 0.0
    estimated_cost: float = 0.0
    billed_cost: float = 0.0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    sessions: set[str] = field(default_factory=set)
    not_charged: int = 0  # calls Cursor did not charge (errored, aborted): counted, cost $0
    cursor_fee: float = 0.0  # Cursor's token fee: part of `billed_cost`, shown on its own

    def add_sums(self, sums: GroupSums, est: bool, billed: bool, session: str) -> None:
        """`sums.calls` calls of one session."""
        self.not_charged += sums.not_charged
        self.cursor_fee += sums.cursor_fee
        cost = sums.cost
        self.cost += cost
        if est:
            self.estimated_cost += cost
        if billed:
            self.billed_cost += cost
        self.calls += sums.calls
        self.input_tokens += sums.input_tokens
        self.output_tokens += sums.output_tokens
        self.cache_read_tokens += sums.cache_read_tokens
        self.cache_write_tokens += sums.cache_write_tokens
        self.sessions.add(session)

    def merge(self, other: Totals) -> None:
        self.cost += other.cost
        self.estimated_cost += other.estimated_cost
        self.billed_cost += other.billed_cost
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.sessions |= other.sessions
        self.not_charged += other.not_charged
        self.cursor_fee += other.cursor_fee

    @property
    def list_price_cost(self) -> float:
        """Exact tokens priced at list rates: neither billed nor estimated (a call is never
        both), so billed + list price + estimated = cost; float noise reads as 0."""
        rest = self.cost - self.billed_cost - self.estimated_cost
        return rest if rest > 1e-9 else 0.0

    @property
    def tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def to_json(self) -> dict[str, Any]:
        """The totals object of docs/report-json.md#report."""
        return {
            "cost": self.cost,
            "estimatedCost": self.estimated_cost,
            "billedCost": self.billed_cost,
            "listPriceCost": self.list_price_cost,
            "calls": self.calls,
            "sessions": len(self.sessions),
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "notCharged": self.not_charged,
            "cursorFee": self.cursor_fee,
        }

    def dump(self) -> list[Any]:
        return [
            self.cost,
            self.estimated_cost,
            self.billed_cost,
            self.calls,
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            sorted(self.sessions),
            self.not_charged,
            self.cursor_fee,
        ]

    @classmethod
    def load(cls, raw: list[Any]) -> Totals:
        # Days sealed before `notCharged` existed have 9 fields, before `cursorFee` 10.
        cost, est, billed, calls, inp, out, cr, cw, sessions, *rest = raw
        if len(rest) > 2:
            raise ValueError("not a totals row")
        return cls(
            float(cost),
            float(est),
            float(billed),
            int(calls),
            int(inp),
            int(out),
            int(cr),
            int(cw),
            {str(s) for s in sessions},
            int(rest[0]) if rest else 0,
            float(rest[1]) if len(rest) > 1 else 0.0,
        )


@dataclass(slots=True)
class ConversationSums:
    """One conversation's usage in a slice (the conversations view, docs/caches.md#daily-cache)."""

    title: str | None
    project: str
    provider: str
    models: set[str] = field(default_factory=set)
    first_ms: int = 0
    last_ms: int = 0
    totals: Totals = field(default_factory=Totals)

    def merge(self, other: ConversationSums) -> None:
        self.title = self.title or other.title
        self.models |= other.models
        self.first_ms = min(self.first_ms, other.first_ms)
        self.last_ms = max(self.last_ms, other.last_ms)
        self.totals.merge(other.totals)

    def copy(self) -> ConversationSums:
        out = ConversationSums(self.title, self.project, self.provider, set(self.models))
        out.first_ms, out.last_ms = self.first_ms, self.last_ms
        out.totals.merge(self.totals)
        return out

    def dump(self) -> list[Any]:
        return [
            self.title,
            self.project,
            self.provider,
            sorted(self.models),
            self.first_ms,
            self.last_ms,
            self.totals.dump(),
        ]

    @classmethod
    def load(cls, raw: list[Any]) -> ConversationSums:
        title, project, provider, models, first, last, totals = raw
        return cls(
            None if title is None else str(title),
            str(project),
            str(provider),
            {str(m) for m in models},
            int(first),
            int(last),
            Totals.load(totals),
        )


@dataclass(slots=True)
class Slice:
    """One provider's usage on one local day."""

    totals: Totals = field(default_factory=Totals)
    models: dict[str, Totals] = field(default_factory=dict)
    projects: dict[str, Totals] = field(default_factory=dict)
    unpriced: dict[str, list[int]] = field(default_factory=dict)  # model → [calls, tokens]
    local_cost: float = 0.0  # locally estimated Cursor dollars that no import covers
    # conversation id → its sums; attribution kind (docs/attribution.md) → [calls, cost] of
    # exact events
    conversations: dict[str, ConversationSums] = field(default_factory=dict)
    attribution: dict[str, list[Any]] = field(default_factory=dict)
    # The sums as a sealed day stored them, made into objects only when a report asks (a status
    # never does, and decoding every sealed day's conversations would slow a warm status).
    stored_conversations: dict[str, Any] | None = None

    def conversation_sums(self) -> dict[str, ConversationSums]:
        raw = self.stored_conversations
        if raw is not None:
            self.stored_conversations = None
            for cid, row in raw.items():
                self.conversations.setdefault(str(cid), ConversationSums.load(row))
        return self.conversations

    def conversation_heads(self) -> Iterator[ConversationHead]:
        """Each conversation, without decoding its totals. A malformed stored row is left out."""
        raw = self.stored_conversations
        for cid, row in (raw or {}).items():
            try:
                title, project, provider, models, first, last = row[:6]
                yield ConversationHead(
                    str(cid),
                    None if title is None else str(title),
                    str(project),
                    str(provider),
                    tuple(str(m) for m in models),
                    int(first),
                    int(last),
                )
            except (TypeError, ValueError):
                continue
        for cid, conv in self.conversations.items():
            if raw is None or cid not in raw:
                models = tuple(sorted(conv.models))
                yield ConversationHead(
                    cid,
                    conv.title,
                    conv.project,
                    conv.provider,
                    models,
                    conv.first_ms,
                    conv.last_ms,
                )

    def add_conversation(
        self,
        session: str,
        head: tuple[str | None, str, str],
        model: str,
        flags: tuple[bool, bool],
        sums: GroupSums,
    ) -> None:
        """Calls of one conversation (`head`: title, project, provider; `flags`: estimated,
        billed)."""
        convs = self.conversation_sums()
        conv = convs.get(session)
        if conv is None:
            conv = convs[session] = ConversationSums(*head)
            conv.first_ms, conv.last_ms = sums.first_ms, sums.last_ms
        else:
            conv.title = conv.title or head[0]
            conv.first_ms = min(conv.first_ms, sums.first_ms)
            conv.last_ms = max(conv.last_ms, sums.last_ms)
        conv.models.add(model)
        conv.totals.add_sums(sums, *flags, session)

    def add_attribution(self, kind: str, calls: int, cost: float) -> None:
        entry = self.attribution.setdefault(kind, [0, 0.0])
        entry[0] += calls
        entry[1] += cost

    def add_group(
        self,
        provider: str,
        model: str,
        project: str,
        session: str,
        est: bool,
        billed: bool,
        priced: bool,
        sums: GroupSums,
        *,
        local: bool,
    ) -> None:
        """Several calls that share everything but their figures, added at once."""
        self.totals.add_sums(sums, est, billed, session)
        totals = self.models.get(model)
        if totals is None:
            totals = self.models[model] = Totals()
        totals.add_sums(sums, est, billed, session)
        totals = self.projects.get(project)
        if totals is None:
            totals = self.projects[project] = Totals()
        totals.add_sums(sums, est, billed, session)
        if not priced:
            entry = self.unpriced.setdefault(model, [0, 0])
            entry[0] += sums.calls
            entry[1] += (
                sums.input_tokens
                + sums.output_tokens
                + sums.cache_read_tokens
                + sums.cache_write_tokens
            )
        if local and provider in LOCAL_ESTIMATE_PROVIDERS:
            self.local_cost += sums.cost

    def merge(self, other: Slice, *, conversations: bool = True) -> None:
        """`conversations=False` leaves the per-conversation sums out (a status needs none)."""
        self.totals.merge(other.totals)
        for name, totals in other.models.items():
            self.models.setdefault(name, Totals()).merge(totals)
        for name, totals in other.projects.items():
            self.projects.setdefault(name, Totals()).merge(totals)
        for name, (calls, tokens) in other.unpriced.items():
            entry = self.unpriced.setdefault(name, [0, 0])
            entry[0] += calls
            entry[1] += tokens
        self.local_cost += other.local_cost
        if conversations:
            mine = self.conversation_sums()
            for cid, conv in other.conversation_sums().items():
                kept = mine.get(cid)
                if kept is None:
                    mine[cid] = conv.copy()
                else:
                    kept.merge(conv)
        for kind, (calls, cost) in other.attribution.items():
            self.add_attribution(kind, calls, cost)

    def dump(self) -> dict[str, Any]:
        return {
            "totals": self.totals.dump(),
            "models": {k: v.dump() for k, v in self.models.items()},
            "projects": {k: v.dump() for k, v in self.projects.items()},
            "unpriced": self.unpriced,
            "localCost": self.local_cost,
            "conversations": self._conversations_json(),
            "attribution": self.attribution,
        }

    def _conversations_json(self) -> dict[str, Any]:
        raw = self.stored_conversations
        if raw is not None and not self.conversations:
            return raw  # as stored: written back unchanged
        return {k: v.dump() for k, v in self.conversation_sums().items()}

    @classmethod
    def load(cls, raw: dict[str, Any]) -> Slice:
        stored = raw.get("conversations")
        if stored is not None and not (
            isinstance(stored, dict)
            and all(isinstance(v, list) and len(v) == 7 for v in stored.values())
        ):
            raise ValueError("not a slice")  # a corrupt file: a miss
        return cls(
            totals=Totals.load(raw["totals"]),
            models={str(k): Totals.load(v) for k, v in raw["models"].items()},
            projects={str(k): Totals.load(v) for k, v in raw["projects"].items()},
            unpriced={str(k): [int(v[0]), int(v[1])] for k, v in raw["unpriced"].items()},
            local_cost=float(raw["localCost"]),
            stored_conversations=stored or None,
            attribution={
                str(k): [int(v[0]), float(v[1])] for k, v in raw.get("attribution", {}).items()
            },
        )


DaySlices = dict[str, Slice]  # provider id → slice


def merge_days(
    days: Iterable[DaySlices],
    providers: frozenset[str] | None = None,
    *,
    conversations: bool = True,
) -> DaySlices:
    """Provider-wise sum of several days (optionally only some providers; `conversations=False`
    without the per-conversation sums)."""
    out: DaySlices = {}
    for day in days:
        for provider, part in day.items():
            if providers is None or provider in providers:
                out.setdefault(provider, Slice()).merge(part, conversations=conversations)
    return out
