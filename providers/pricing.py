"""Model prices (STUB: replaced by the catalogue-backed implementation)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token."""

    input: float
    output: float
    cache_write: float
    cache_read: float


_SONNET = Rates(3e-6, 15e-6, 3.75e-6, 0.3e-6)
_TABLE = {"claude-sonnet-4-5": _SONNET, "gpt-5": Rates(1.25e-6, 10e-6, 1.5625e-6, 0.125e-6)}
_ALIASES = {"cursor-auto": "claude-sonnet-4-5", "claude-4.6-sonnet": "claude-sonnet-4-5"}


def rates_for(model: str) -> Rates | None:
    return _TABLE.get(_ALIASES.get(model, model))


def cost_of(
    model: str,
    input_tokens: int,
    output_tokens: int,
    cache_write_tokens: int = 0,
    cache_read_tokens: int = 0,
) -> tuple[float, bool]:
    rates = rates_for(model)
    if rates is None:
        return 0.0, False
    return (
        input_tokens * rates.input
        + output_tokens * rates.output
        + cache_write_tokens * rates.cache_write
        + cache_read_tokens * rates.cache_read
    ), True


def display_name(model: str) -> str:
    return {"cursor-auto": "Cursor (auto)", "gpt-5": "GPT-5"}.get(model, model)
