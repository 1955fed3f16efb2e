"""Display names by rule (docs/pricing.md, "Display names").

The table pins the name of every model id found in the real data under ../shared/data (extracted
once, by hand): the exports' Model column (as the importer stores it: `auto` is `cursor-auto`),
the model fields of the real Cursor databases, CLI stores and their model lists, and the
`message.model` / `turn_context.model` of the real Claude Code and Codex logs.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from codeburn.providers import display_name
from codeburn.providers.exports.usage_csv import normalise_model

REAL_CSV = Path(__file__).resolve().parent.parent / "data" / "real-csv"

# The Model column of the real exports (tests/data/real-csv).
FROM_EXPORTS = {
    "cursor-auto": "Cursor (auto)",  # `auto`, stored as cursor-auto
    "agent_review": "Cursor (review agent)",
    "claude-3.7-sonnet": "Sonnet 3.7",
    "claude-3.7-sonnet-thinking": "Sonnet 3.7 (Thinking)",
    "claude-4-sonnet": "Sonnet 4",
    "claude-4-sonnet-thinking": "Sonnet 4 (Thinking)",
    "claude-4.1-opus-thinking": "Opus 4.1 (Thinking)",
    "claude-4.5-haiku-thinking": "Haiku 4.5 (Thinking)",
    "claude-4.5-opus-high-thinking": "Opus 4.5 (Thinking, high)",
    "claude-4.5-sonnet": "Sonnet 4.5",
    "claude-4.5-sonnet-thinking": "Sonnet 4.5 (Thinking)",
    "claude-4.6-opus-high-thinking": "Opus 4.6 (Thinking, high)",
    "claude-4.6-opus-max-thinking": "Opus 4.6 (Thinking, max)",
    "claude-4.6-sonnet-max-thinking": "Sonnet 4.6 (Thinking, max)",
    "claude-4.6-sonnet-medium-thinking": "Sonnet 4.6 (Thinking, medium)",
    "claude-opus-4-7-thinking-max": "Opus 4.7 (Thinking, max)",
    "claude-opus-4-7-thinking-xhigh": "Opus 4.7 (Thinking, xhigh)",
    "code-supernova": "Code Supernova",
    "code-supernova-1-million": "Code Supernova (1M)",
    "composer-1": "Composer 1",
    "composer-1.5": "Composer 1.5",
    "composer-2": "Composer 2",
    "composer-2-fast": "Composer 2 (fast)",
    "gemini-2.5-pro-exp-03-25": "Gemini 2.5 Pro (experimental)",
    "gemini-2.5-pro-preview-05-06": "Gemini 2.5 Pro (preview)",
    "gemini-3-pro": "Gemini 3 Pro",
    "gemini-3-pro-preview": "Gemini 3 Pro (preview)",
    "gemini-3.1-pro": "Gemini 3.1 Pro",
    "gpt-4o": "GPT-4o",
    "gpt-5": "GPT-5",
    "gpt-5-fast": "GPT-5 (fast)",
    "gpt-5-high": "GPT-5 (high)",
    "gpt-5.1-codex-high": "GPT-5.1 Codex (high)",
    "gpt-5.1-codex-high-fast": "GPT-5.1 Codex (high, fast)",
    "gpt-5.3-codex-xhigh-fast": "GPT-5.3 Codex (xhigh, fast)",
    "gpt-5.5-extra-high": "GPT-5.5 (extra high)",
    "gpt-5.5-extra-high-fast": "GPT-5.5 (extra high, fast)",
    "gpt-5.5-medium": "GPT-5.5 (medium)",
    "grok-4-0709": "Grok 4",
    "grok-code-fast-1": "Grok Code Fast",
    "us.anthropic.claude-opus-4-6-v1": "Opus 4.6",
}
# Model fields of the real Cursor files: calls, composerData `modelConfig`, bubbles' `modelInfo`
# (p01, p04), the CLI stores' `lastUsedModel` (c01), statsig model settings (p01, p04).
FROM_CURSOR_FILES = {
    "default": "Cursor (auto)",
    "composer-2.5": "Composer 2.5",
    "composer-2.5-fast": "Composer 2.5 (fast)",
    "claude-4-5-sonnet-20250929": "Sonnet 4.5",
    "claude-4-5-sonnet-20250929-thinking": "Sonnet 4.5 (Thinking)",
    "fiercefalcon": "fiercefalcon",  # a code name: no rule knows it
}
# Cursor's own model lists in the same databases (`availableDefaultModels2` of p01 3.7.36 and
# p04 2.0.34), beside the name Cursor shows where ours differs on purpose.
FROM_CURSOR_MODEL_LISTS = {
    "claude-opus-4-8": "Opus 4.8",
    "gpt-5.5": "GPT-5.5",
    "claude-sonnet-4-6": "Sonnet 4.6",
    "gpt-5.3-codex": "GPT-5.3 Codex",  # Cursor: "Codex 5.3"
    "claude-opus-4-7": "Opus 4.7",
    "grok-build-0.1": "Grok Build 0.1",
    "gpt-5.4": "GPT-5.4",
    "claude-opus-4-6": "Opus 4.6",
    "claude-opus-4-5": "Opus 4.5",
    "gpt-5.2": "GPT-5.2",
    "gemini-3.1-pro": "Gemini 3.1 Pro",
    "gpt-5.4-mini": "GPT-5.4 Mini",
    "gpt-5.4-nano": "GPT-5.4 Nano",
    "claude-haiku-4-5": "Haiku 4.5",
    "grok-4.3": "Grok 4.3",
    "claude-sonnet-4-5": "Sonnet 4.5",
    "gpt-5.2-codex": "GPT-5.2 Codex",
    "gpt-5.1-codex-max": "GPT-5.1 Codex Max",  # a model of its own, not an effort
    "gpt-5.1": "GPT-5.1",
    "gemini-3-flash": "Gemini 3 Flash",
    "gemini-3.5-flash": "Gemini 3.5 Flash",
    "gpt-5.1-codex-mini": "GPT-5.1 Codex Mini",
    "claude-sonnet-4": "Sonnet 4",
    "gpt-5-mini": "GPT-5 Mini",
    "gemini-2.5-flash": "Gemini 2.5 Flash",
    "kimi-k2.5": "Kimi K2.5",
    "claude-fable-5": "Fable 5",
    "composer-1": "Composer 1",
    "claude-4-sonnet-1m": "Sonnet 4 (1M)",
    "claude-4-sonnet-1m-thinking": "Sonnet 4 (Thinking, 1M)",
    "claude-4.1-opus": "Opus 4.1",
    "claude-4-opus": "Opus 4",
    "claude-4-opus-thinking": "Opus 4 (Thinking)",
    "gpt-5-codex-high": "GPT-5 Codex (high)",
    "gpt-5-codex-fast": "GPT-5 Codex (fast)",
    "gpt-5-codex-high-fast": "GPT-5 Codex (high, fast)",
    "gpt-5-medium": "GPT-5 (medium)",
    "gpt-5-medium-fast": "GPT-5 (medium, fast)",
    "gpt-5-high-fast": "GPT-5 (high, fast)",
    "gpt-5-low": "GPT-5 (low)",
    "gpt-5-low-fast": "GPT-5 (low, fast)",
    "claude-4.5-haiku": "Haiku 4.5",
    "o3": "o3",
    "o3-pro": "o3 Pro",
    "gemini-2.5-flash-preview-05-20": "Gemini 2.5 Flash (preview)",
    "gpt-4.1": "GPT-4.1",
    "gpt-5-nano": "GPT-5 Nano",
    "gpt-5-pro": "GPT-5 Pro",
    "deepseek-r1-0528": "DeepSeek R1",
    "deepseek-v3.1": "DeepSeek V3.1",
    "grok-4": "Grok 4",
    "grok-4-fast-reasoning": "Grok 4 (fast, reasoning)",
    "grok-4-fast-non-reasoning": "Grok 4 (fast, non-reasoning)",
    "accounts/fireworks/models/kimi-k2-instruct": "Kimi K2 Instruct",
}
# `message.model` of the real Claude Code logs, `turn_context.model` of the real Codex logs.
FROM_AGENT_LOGS = {
    "claude-opus-4-5-20251101": "Opus 4.5",
    "claude-sonnet-4-20250514": "Sonnet 4",
    "claude-sonnet-4-5-20250929": "Sonnet 4.5",
    "gpt-5-codex": "GPT-5 Codex",
    "gpt-5.1-codex": "GPT-5.1 Codex",
    "gpt-5.2-codex": "GPT-5.2 Codex",
}
# Ids the docs and the sample data name (beyond the real files).
OTHERS = {
    "auto": "Cursor (auto)",
    "claude-4.6-sonnet": "Sonnet 4.6",
    "claude-opus-5-thinking-high": "Opus 5 (Thinking, high)",
    "claude-3-5-sonnet-20241022": "Sonnet 3.5",
    "cursor-grok-4.6-high": "Grok 4.6 (high)",
    "anthropic/claude-sonnet-4-5": "Sonnet 4.5",
    "gpt-4o-2024-08-06": "GPT-4o",
    "cursor-small": "cursor-small",
    "some-new-model": "some-new-model",
}
ALL = {
    **FROM_EXPORTS,
    **FROM_CURSOR_FILES,
    **FROM_CURSOR_MODEL_LISTS,
    **FROM_AGENT_LOGS,
    **OTHERS,
}


@pytest.mark.parametrize(("model", "name"), sorted(ALL.items()))
def test_display_name(model: str, name: str) -> None:
    assert display_name(model) == name


def test_every_model_of_the_real_exports_is_pinned() -> None:
    """A new export's model must get its expected name here, not just any name."""
    found = set()
    for path in REAL_CSV.glob("*.csv"):
        with path.open(newline="", encoding="utf-8") as handle:
            found |= {normalise_model(row["Model"])[1] for row in csv.DictReader(handle)}
    assert len(found) > 30
    assert found - FROM_EXPORTS.keys() == set()


def test_ids_that_differ_in_mode_or_effort_keep_distinct_names() -> None:
    groups: dict[str, set[str]] = {}
    for model, name in ALL.items():
        groups.setdefault(name, set()).add(model)
    variants = ("thinking", "high", "max", "xhigh", "medium", "low", "fast", "1m", "preview")
    for name, models in groups.items():
        signatures = {
            tuple(v for v in variants if v in model.lower().split("-")) for model in models
        }
        assert len(signatures) == 1, (name, models)


@pytest.mark.parametrize(
    "model", ["", "claude", "claude-thinking", "gpt-", "claude-4.5-sonnet-odd", "GLM-4.7", "zai/x"]
)
def test_ids_no_rule_reads_show_as_they_are(model: str) -> None:
    assert display_name(model) == model
