"""Figures for people: digits where they matter, `~` for estimates, honest sync wording."""

from __future__ import annotations

import pytest

from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.server.formatting import format_money, format_tokens, local_estimate_note
from codeburn.server.text_output import ago, money, status_line


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (0, "$0.00"),
        (0.0045, "$0.0045"),
        (0.05, "$0.050"),
        (0.999, "$0.999"),
        (1.75, "$1.75"),
        (1234.5, "$1,234.50"),
        (-0.25, "-$0.250"),
    ],
)
def test_money(usd: float, text: str) -> None:
    assert format_money(usd) == text


def test_tokens() -> None:
    assert [format_tokens(n) for n in (950, 14_770, 3_200_000)] == ["950", "14.8K", "3.2M"]


def test_estimated_figures_carry_a_tilde() -> None:
    assert money({"cost": 1.75, "estimatedCost": 0.5}) == "~$1.75"
    assert money({"cost": 1.75, "estimatedCost": 0}) == "$1.75"


def test_local_estimate_note() -> None:
    assert local_estimate_note(0.031) == (
        "includes $0.031 of Cursor priced from local files, not Cursor's bill"
    )


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
