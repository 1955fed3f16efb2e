"""Figures for people: digits where they matter, `~` for estimates, honest sync wording."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.server.cli.lines import ago, money, status_line
from codeburn.server.service.formatting import (
    format_money,
    format_tokens,
    local_estimate_note,
    split_money,
    split_text,
)

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "formatting.json").read_text())


# One rule with the extension (vscode-client/test/format.test.ts reads the same file).
@pytest.mark.parametrize(("usd", "text"), GOLDEN["money"])
def test_money_follows_the_shared_golden_file(usd: float, text: str) -> None:
    assert format_money(usd) == text


@pytest.mark.parametrize("usd", [math.nan, math.inf, -math.inf])
def test_money_that_is_not_a_number_is_never_shown_as_one(usd: float) -> None:
    assert format_money(usd) == GOLDEN["moneyNotFinite"]


@pytest.mark.parametrize(("count", "text"), GOLDEN["tokens"])
def test_tokens_follow_the_shared_golden_file(count: int, text: str) -> None:
    assert format_tokens(count) == text


@pytest.mark.parametrize("count", [math.nan, math.inf])
def test_tokens_that_are_not_a_number_are_never_shown_as_one(count: float) -> None:
    assert format_tokens(count) == GOLDEN["tokensNotFinite"]


def test_the_golden_file_covers_both_rules() -> None:
    assert len(GOLDEN["money"]) >= 20 and len(GOLDEN["tokens"]) >= 20


def test_estimated_figures_carry_a_tilde() -> None:
    assert money({"cost": 1.75, "estimatedCost": 0.5}) == "~$1.75"
    assert money({"cost": 1.75, "estimatedCost": 0}) == "$1.75"


@pytest.mark.parametrize(("usd", "text"), GOLDEN["localEstimateNote"])
def test_local_estimate_note(usd: float, text: str) -> None:
    assert local_estimate_note(usd) == text


@pytest.mark.clock
def test_relative_times() -> None:
    now = now_ms()
    assert ago(iso_utc(now - 12 * 60_000)) == "12 min ago"
    assert ago(iso_utc(now - 5 * 3600_000)) == "5 h ago"
    assert ago(iso_utc(now - 3 * 86_400_000)) == "3 days ago"
    assert ago(None) == "at an unknown time"


def test_status_line_never_shows_a_bare_zero_for_missing_data() -> None:
    empty = {"cost": 0, "estimatedCost": 0, "calls": 0}
    status = {
        "state": "no-data",
        "message": "No Cursor data found at /x",
        "today": empty,
        "month": empty,
    }
    assert status_line(status) == "CodeBurn: No Cursor data found at /x"
    locked = {**status, "state": "db-locked", "message": "Cursor database busy, retrying"}
    assert "Cursor database busy, retrying" in status_line(locked)


@pytest.mark.parametrize(
    "value",
    [1e28, 1e30, 1e300, -1e300, 1.7976931348623157e308, 5e-324, 2.0**53 - 1, 10**28, 10**400],
)
def test_formatting_never_raises_for_any_amount(value: float) -> None:
    """A 28-digit or 400-digit Cost, a meter of 10^30: a figure, never a traceback (issue 20)."""
    assert "$" in format_money(value)
    assert format_tokens(value)[-1].isalnum()


def test_whole_token_counts_are_exact_at_any_size() -> None:
    assert format_tokens(10**400) == "1" + "0" * 391 + "B"
    assert format_money(10**400) == GOLDEN["moneyNotFinite"]  # no float holds it


# -- the total's three parts (issue 18, item 5) ---------------------------------------------


@pytest.mark.parametrize(("cost", "billed", "list_price", "estimated", "text"), GOLDEN["split"])
def test_the_split_follows_the_shared_golden_file(
    cost: float, billed: float, list_price: float, estimated: float, text: str
) -> None:
    assert split_text(cost, billed, list_price, estimated) == text


def _shown(text: str) -> Decimal:
    return Decimal(text.lstrip("~$").replace(",", ""))


money_values = st.floats(min_value=0, max_value=50_000, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(billed=money_values, list_price=money_values, estimated=money_values)
def test_the_parts_as_shown_add_up_to_the_total_as_shown(
    billed: float, list_price: float, estimated: float
) -> None:
    cost = billed + list_price + estimated
    total = format_money(cost)
    texts = split_money(cost, [billed, list_price, estimated])
    if total.startswith("<"):
        return
    places = len(total.split(".")[1]) if "." in total else 0
    shown = [t for t, v in zip(texts, (billed, list_price, estimated), strict=True) if v > 0]
    for text in shown:  # the total's decimals for every part
        digits = text.lstrip("~<$")
        assert (len(digits.split(".")[1]) if "." in digits else 0) == places, (text, total)
    assert texts[2].startswith("~") == (estimated > 0)
    exact = [_shown(t) for t in shown if "<" not in t]
    assert sum(exact, Decimal(0)) == _shown(total), (texts, total)
