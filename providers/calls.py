"""The call record every source produces, and the provider ids."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

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
