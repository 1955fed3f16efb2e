"""Money and token figures for people (text output, notes, the status bar)."""

from __future__ import annotations


def format_money(usd: float) -> str:
    """`$0.0045`, `$0.050`, `$1.75`, `$1,234.56`: more digits only where they matter."""
    sign = "-" if usd < 0 else ""
    value = abs(usd)
    if value == 0:
        return "$0.00"
    if value < 0.01:
        return f"{sign}${value:.4f}"
    if value < 1:
        return f"{sign}${value:.3f}"
    return f"{sign}${value:,.2f}"


def format_tokens(count: int) -> str:
    """`950`, `14.8K`, `3.2M`."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}K"
    return f"{count / 1_000_000:.1f}M"


def local_estimate_note(usd: float) -> str:
    return f"includes {format_money(usd)} of Cursor priced from local files, not Cursor's bill"
