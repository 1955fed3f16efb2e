"""The call record every source produces, and the provider ids."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

CURSOR: Final = "cursor"
CURSOR_AGENT: Final = "cursor-agent"
GROKBOT: Final = "grokbot"
# Not a provider of Cursor spend: export rows billed by the user's own API key, listed apart.
USER_API_KEY: Final = "user-api-key"

PROVIDER_NAMES: Final[dict[str, str]] = {
    CURSOR: "Cursor",
    CURSOR_AGENT: "Cursor Agent",
    GROKBOT: "Grok Bot",
}

# Projects for usage that no workspace claims.
UNMAPPED_PROJECT: Final = "cursor"
IMPORTED_PROJECT: Final = "Cursor (imported)"
GROKBOT_IMPORTED_PROJECT: Final = "Grok Bot (imported)"
# Exact events whose conversation no local file knows: the account's usage made elsewhere.
OTHER_MACHINES_PROJECT: Final = "Other machines and cloud agents"


# Not frozen (but hashable): a frozen dataclass's __init__ goes through object.__setattr__ and
# costs ~6x more, and a parse builds one Call per message. Treat instances as immutable.
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
        """Inverse of `to_row`; raises on a malformed row (callers treat that as a cache miss)."""
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
        return cls(
            key=str(key),
            provider=str(provider),
            model=str(model),
            project=str(project),
            session=str(session),
            timestamp_ms=int(ts),
            input_tokens=int(inp),
            output_tokens=int(out),
            cache_read_tokens=int(cr),
            cache_write_tokens=int(cw),
            cost=float(cost),
            estimated=bool(est),
            billed=bool(billed),
            priced=bool(priced),
            tools=tuple(str(t) for t in tools),
            commands=tuple(str(c) for c in commands),
        )
