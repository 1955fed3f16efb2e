"""Model prices (a bundled LiteLLM snapshot + SPEC §3) and the one display-name function."""

from codeburn.providers.pricing.prices import (
    base_model,
    canonical_model,
    claude_cost,
    cost_of,
    display_name,
    rates_for,
)

__all__ = [
    "base_model",
    "canonical_model",
    "claude_cost",
    "cost_of",
    "display_name",
    "rates_for",
]
