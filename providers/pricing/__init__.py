"""Model prices (a bundled LiteLLM snapshot + docs/pricing.md's table) and display names by rule."""

from codeburn.providers.pricing.display import display_name
from codeburn.providers.pricing.prices import (
    base_model,
    canonical_model,
    claude_cost,
    cost_of,
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
