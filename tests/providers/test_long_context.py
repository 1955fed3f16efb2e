"""Long-context tiers (docs/pricing.md): in one Claude Code request, the tokens of a kind beyond
200k are priced at the model's long-context rates, kind by kind, as ccusage 20.0.24 does; Cursor's
rows keep the flat rates. Expected costs are worked out here from the rates docs/pricing.md
lists, and held to ccusage's own figures for the same lines (tests/data/long-context/)."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from codeburn.providers.agents import ClaudeFile, claude_calls, decode_claude
from codeburn.providers.pricing import claude_cost, cost_of

DATA = Path(__file__).parents[1] / "data" / "long-context"
PROJECTS = DATA / "claude" / "projects"
M = 1_000_000
THRESHOLD = 200_000

# USD per million: input, output, cache write 5 m, cache write 1 h, cache read.
SONNET = (3, 15, 3.75, 6, 0.30)
SONNET_LONG = (6, 22.5, 7.5, 12, 0.60)  # beyond 200k tokens of a kind (Sonnet 4 and 4.5)
OPUS_46 = (5, 25, 6.25, 10, 0.50)
HAIKU_45 = (1, 5, 1.25, 2, 0.10)


def by_hand(
    tokens: tuple[int, int, int, int, int],
    flat: tuple[float, ...],
    long: tuple[float, ...] | None,
) -> float:
    """Σ over the five kinds: up to 200k at the flat rate, the rest at the long-context one."""
    total = 0.0
    for n, rate, above in zip(tokens, flat, long or flat, strict=True):
        if long is not None and n > THRESHOLD:
            total += (THRESHOLD * rate + (n - THRESHOLD) * above) / M
        else:
            total += n * rate / M
    return total


# The requests of tests/data/long-context/ in file order, one a day: (day, model, tokens as
# input / output / cache write 5 m / cache write 1 h / cache read, flat rates, tier).
CASES = [
    # 250k cache read: 200k at 0.30, 50k at 0.60.
    ("2025-10-11", "claude-sonnet-4-5-20250929", (10, 1000, 5000, 0, 250_000), SONNET, SONNET_LONG),
    ("2025-10-12", "claude-sonnet-4-20250514", (10, 1000, 5000, 0, 250_000), SONNET, SONNET_LONG),
    # A 210k prompt with no kind beyond 200k: flat, as ccusage prices it.
    ("2025-10-13", "claude-sonnet-4-5-20250929", (150_000, 1000, 60_000, 0, 0), SONNET, None),
    # Every kind beyond 200k, the 1-hour write at its own long-context rate.
    (
        "2025-10-14",
        "claude-sonnet-4-5-20250929",
        (300_000, 250_000, 210_000, 220_000, 0),
        SONNET,
        SONNET_LONG,
    ),
    # No tier in the catalogue or the table: flat however long.
    ("2025-10-15", "claude-opus-4-6", (10, 1000, 5000, 0, 250_000), OPUS_46, None),
    ("2025-10-16", "claude-sonnet-4-6", (10, 1000, 5000, 0, 250_000), SONNET, None),
    # Exactly 200k is not beyond it.
    ("2025-10-17", "claude-sonnet-4-5-20250929", (10, 1000, 5000, 0, 200_000), SONNET, None),
    ("2025-10-18", "claude-haiku-4-5-20251001", (250_000, 1000, 0, 0, 250_000), HAIKU_45, None),
]


@pytest.mark.parametrize(("day", "model", "tokens", "flat", "long"), CASES)
def test_a_request_beyond_200k_of_a_kind_pays_the_tier_for_the_rest(
    day: str,
    model: str,
    tokens: tuple[int, int, int, int, int],
    flat: tuple[float, ...],
    long: tuple[float, ...] | None,
) -> None:
    cost, priced = claude_cost(model, *tokens)
    assert priced
    assert cost == pytest.approx(by_hand(tokens, flat, long), rel=1e-12)


def test_the_tier_moves_the_figure_by_the_rate_difference_alone() -> None:
    """250k cache read of Sonnet 4.5: 50k tokens × (0.60 − 0.30) per million more than flat."""
    with_tier, _ = claude_cost("claude-sonnet-4-5-20250929", 0, 0, 0, 0, 250_000)
    assert with_tier == pytest.approx(250_000 * 0.30 / M + 50_000 * 0.30 / M, rel=1e-12)
    flat_part, _ = claude_cost("claude-sonnet-4-5-20250929", 0, 0, 0, 0, 200_000)
    assert with_tier - flat_part == pytest.approx(50_000 * 0.60 / M, rel=1e-9)


def test_cursor_rows_keep_the_flat_rates() -> None:
    """Cursor's names for the same model, and its rows of any length: no tier (cost_of)."""
    tokens = (300_000, 1000, 250_000, 250_000)  # input, output, cache write, cache read
    for model in ("claude-4.5-sonnet", "claude-4-sonnet-1m", "claude-sonnet-4-5-20250929"):
        cost, priced = cost_of(model, *tokens)
        assert priced
        expected = (300_000 * 3 + 1000 * 15 + 250_000 * 3.75 + 250_000 * 0.30) / M
        assert cost == pytest.approx(expected, rel=1e-12), model


def test_the_reader_prices_each_day_as_ccusage_does() -> None:
    """The lines of tests/data/long-context/ through the Claude Code reader: every day's cost
    equals what we work out by hand and ccusage 20.0.24's (ccusage-claude-daily.json)."""
    files = []
    for path in sorted(PROJECTS.rglob("*.jsonl")):
        chunk = decode_claude(path.read_bytes())
        assert chunk.bad_lines == 0
        files.append(ClaudeFile(path.relative_to(PROJECTS).as_posix(), chunk.requests))
    ours: dict[str, float] = defaultdict(float)
    for call in claude_calls(files).calls:
        ours[datetime.fromtimestamp(call.timestamp_ms / 1000, UTC).date().isoformat()] += call.cost
    golden = json.loads((DATA / "ccusage-claude-daily.json").read_text())["daily"]
    theirs = {d["date"]: d["totalCost"] for d in golden}
    hand = {day: by_hand(tokens, flat, long) for day, _, tokens, flat, long in CASES}
    assert sorted(ours) == sorted(theirs) == sorted(hand)
    for day, cost in theirs.items():
        assert ours[day] == pytest.approx(cost, rel=1e-9), day
        assert ours[day] == pytest.approx(hand[day], rel=1e-12), day
