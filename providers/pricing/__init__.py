"""Model prices (a bundled LiteLLM snapshot + docs/pricing.md's table) and the one display-name
function."""

from codeburn.providers.pricing.prices import (
    base_model,
    canonical_model,
    cost_of,
    display_name,
    rates_for,
)

__all__ = [
    "base_model",
    "canonical_model",
    "cost_of",
    "display_name",
    "rates_for",
]
