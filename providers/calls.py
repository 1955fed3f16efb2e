"""The call record every source produces, and the provider ids."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final, NamedTuple, overload

CURSOR: Final = "cursor"
CURSOR_AGENT: Final = "cursor-agent"
GROKBOT: Final = "grokbot"
# Other AI coding tools whose own logs on this machine we read (docs/other-tools.md).
CLAUDE_CODE: Final = "claude-code"
CODEX: Final = "codex"
# Not a provider of Cursor spend: export rows billed by the user's own API key, listed apart.
USER_API_KEY: Final = "user-api-key"

PROVIDER_NAMES: Final[dict[str, str]] = {
    CURSOR: "Cursor",
    CURSOR_AGENT: "Cursor Agent",
    GROKBOT: "Grok Bot",
    CLAUDE_CODE: "Claude Code",
    CODEX: "Codex",
}

# Projects for usage that no workspace claims.
UNMAPPED_PROJECT: Final = "cursor"
IMPORTED_PROJECT: Final = "Cursor (imported)"
GROKBOT_IMPORTED_PROJECT: Final = "Grok Bot (imported)"
# Exact events whose conversation no local file knows: the account's usage made elsewhere.
OTHER_MACHINES_PROJECT: Final = "Other machines and cloud agents"


# One rule for a token count estimated from text (the original tool's name for it): a token
# stands for 4 characters, rounded up. Every estimate goes through it, so it changes in one place.
CHARS_PER_TOKEN: Final = 4


def estimate_tokens(chars: int) -> int:
    """Tokens of `chars` characters: `ceil(chars / CHARS_PER_TOKEN)`; 0 → 0, 1–4 → 1, 5 → 2."""
    return -(-chars // CHARS_PER_TOKEN) if chars > 0 else 0


_NUMBERS: Final = (int, float)


# Not frozen (but hashable): a frozen dataclass's __init__ goes through object.__setattr__ and
# costs several times more, and a parse builds one Call per message. Treat instances as immutable.
@dataclass(slots=True, unsafe_hash=True)
class Call:
    """One priced usage record: a request, or one estimate standing for one."""

    key: str
    provider: str
    model: str
    project: str
    session: str
    timestamp_ms: int
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0
    estimated: bool = True
    billed: bool = False
    priced: bool = True
    tools: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    not_charged: bool = False  # an exported row Cursor did not charge (cost 0, still a call)
    cursor_fee: float = 0.0  # Cursor's token fee, part of a billed `cost` (JSON events only)

    @property
    def tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def to_row(self) -> list[Any]:
        """Compact JSON form for the caches (field order of the dataclass)."""
        return [
            self.key,
            self.provider,
            self.model,
            self.project,
            self.session,
            self.timestamp_ms,
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.cost,
            self.estimated,
            self.billed,
            self.priced,
            list(self.tools),
            list(self.commands),
        ]

    @classmethod
    def from_row(cls, row: list[Any]) -> Call:
        """Inverse of `to_row`; raises on a malformed row (callers treat that as a cache miss).

        Types checked, not converted: a warm status makes every call of the day from the
        results cache, and keyword arguments through `str()`/`int()` are slower."""
        (
            key,
            provider,
            model,
            project,
            session,
            ts,
            inp,
            out,
            cr,
            cw,
            cost,
            est,
            billed,
            priced,
            tools,
            commands,
        ) = row
        if not (
            type(key) is type(provider) is type(model) is type(project) is type(session) is str
            and type(ts) is type(inp) is type(out) is type(cr) is type(cw) is int
            and type(cost) in _NUMBERS
            and type(est) is type(billed) is type(priced) is bool
            and type(tools) is type(commands) is list
        ):
            raise TypeError("not a call row")
        return cls(
            key,
            provider,
            model,
            project,
            session,
            ts,
            inp,
            out,
            cr,
            cw,
            float(cost),
            est,
            billed,
            priced,
            tuple(map(str, tools)),
            tuple(map(str, commands)),
        )


class SessionRun(NamedTuple):
    """What a session's calls say of it: its first call's project and provider, its models
    (in the order they first appear) and the span of its calls."""

    project: str
    provider: str
    models: tuple[str, ...]
    first_ms: int
    last_ms: int


class CallRun(Sequence[Call]):
    """Calls in order that are made as they are asked for (a large history's calls, held as
    objects all at once, would be most of a command's memory): a read that goes through them
    once, as deriving the days does, holds a few at a time. Equal to a list of equal calls.

    A subclass gives `__len__`, `__iter__` and `_at`; `since` and `runs` answer from its own
    columns where it can, and are property-tested equal to these."""

    def _at(self, index: int) -> Call:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Call: ...

    @overload
    def __getitem__(self, index: slice) -> list[Call]: ...

    def __getitem__(self, index: int | slice) -> Call | list[Call]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(len(self))[index]]
        return self._at(range(len(self))[index])  # IndexError and negative indexes as for a list

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def since(self, ms: int) -> list[Call]:
        """The calls at or after `ms`, in order."""
        return [c for c in self if c.timestamp_ms >= ms]

    def runs(self) -> dict[str, SessionRun]:
        """`session_runs` of these calls."""
        return session_runs(self)


class CallChain(CallRun):
    """Sequences of calls one after another, made as they are asked for."""

    def __init__(self, *parts: Sequence[Call]) -> None:
        self.parts = parts

    def __len__(self) -> int:
        return sum(len(part) for part in self.parts)

    def __iter__(self) -> Iterator[Call]:
        # (no generator of ours: lists, and chains of them, are gone through at C speed)
        return chain.from_iterable(self.parts)

    def _at(self, index: int) -> Call:
        for part in self.parts:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(index)

    def since(self, ms: int) -> list[Call]:
        return [c for part in self.parts for c in calls_since(part, ms)]

    def runs(self) -> dict[str, SessionRun]:
        runs: dict[str, SessionRun] = {}
        for part in self.parts:
            for session, run in runs_of(part).items():
                held = runs.get(session)
                runs[session] = run if held is None else _joined(held, run)
        return runs


def calls_since(calls: Sequence[Call], ms: int) -> list[Call]:
    """The calls at or after `ms`, in order."""
    if isinstance(calls, CallRun):
        return calls.since(ms)
    return [c for c in calls if c.timestamp_ms >= ms]


def runs_of(calls: Sequence[Call]) -> dict[str, SessionRun]:
    """`session_runs` of `calls`, from their own columns where they are a `CallRun`."""
    return calls.runs() if isinstance(calls, CallRun) else session_runs(calls)


def session_runs(calls: Iterable[Call]) -> dict[str, SessionRun]:
    """Per session (in the order first seen), what its calls say of it (`SessionRun`)."""
    runs = SessionRuns()
    for c in calls:
        runs.add(c.session, c.project, c.provider, c.model, c.timestamp_ms)
    return runs.runs()


class SessionRuns:
    """`SessionRun`s made as calls are met, in order: a session's first call gives its project
    and provider."""

    def __init__(self) -> None:
        self._runs: dict[str, tuple[str, str, dict[str, None], list[int]]] = {}

    def add(self, session: str, project: str, provider: str, model: str, ms: int) -> None:
        run = self._runs.get(session)
        if run is None:
            self._runs[session] = (project, provider, {model: None}, [ms, ms])
            return
        run[2][model] = None
        span = run[3]
        if ms < span[0]:
            span[0] = ms
        elif ms > span[1]:
            span[1] = ms

    def runs(self) -> dict[str, SessionRun]:
        return {
            session: SessionRun(project, provider, tuple(models), span[0], span[1])
            for session, (project, provider, models, span) in self._runs.items()
        }


def _joined(first: SessionRun, then: SessionRun) -> SessionRun:
    """One session's run from the runs of two consecutive sequences of calls."""
    models = tuple(dict.fromkeys(first.models + then.models))
    return first._replace(
        models=models,
        first_ms=min(first.first_ms, then.first_ms),
        last_ms=max(first.last_ms, then.last_ms),
    )
