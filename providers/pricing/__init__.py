"""Model prices (a bundled LiteLLM snapshot + SPEC §3) and the one display-name function."""

from codeburn.providers.pricing.prices import canonical_model, cost_of, display_name, rates_for

__all__ = [
    "canonical_model",
    "cost_of",
    "display_name",
    "rates_for",
]
