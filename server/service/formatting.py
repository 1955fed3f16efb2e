"""Money and token figures for people (text output, notes, budget notices).

The same rule as the extension's `format.ts`, pinned for both by `tests/golden/formatting.json`:
money rounds half up on the exact value, then takes as many decimals as the rounded amount needs
(whole dollars from $100, as in the status bar); tokens take three significant figures with K, M, B.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Final

_UNITS: Final = ((1_000, "K"), (1_000_000, "M"), (1_000_000_000, "B"))
# The largest float has 309 integer digits: enough precision that rounding it never overflows.
_EXACT: Final = Context(prec=400, Emax=999_999, Emin=-999_999)


def _rounded(value: float, places: int) -> Decimal:
    return Decimal(value).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP, _EXACT)


def format_money(usd: float) -> str:
    """`$0.0045`, `$0.050`, `$1.75`, `$123`, `$1,235`; `<$0.0001`, never a misleading `$0.00`."""
    if isinstance(usd, int) and not isinstance(usd, bool):
        usd = float(usd) if abs(usd) < 2**1023 else math.inf
    if not math.isfinite(usd):
        return "$?"
    sign = "-" if usd < 0 else ""
    value = abs(usd)
    if value == 0:
        return "$0.00"
    if (four := _rounded(value, 4)) == 0:
        return f"{sign}<$0.0001"
    if four < Decimal("0.01"):
        return f"{sign}${four}"
    if (three := _rounded(value, 3)) < 1:
        return f"{sign}${three}"
    if (cents := _rounded(value, 2)) < 100:
        return f"{sign}${cents:,}"
    return f"{sign}${_rounded(value, 0):,}"


def _half_up_div(count: int, divisor: int) -> int:
    return (2 * count + divisor) // (2 * divisor)


def format_tokens(value: float) -> str:
    """`950`, `1.2K`, `14.8K`, `123K`, `3.2M`, `1.5B`: three significant figures at most."""
    if not isinstance(value, int) and not math.isfinite(value):
        return "?"
    sign = "-" if value < 0 else ""
    count = abs(value) if isinstance(value, int) else int(_rounded(abs(value), 0))
    if count < 1000:
        return f"{sign}{count}"
    for n, (unit, suffix) in enumerate(_UNITS):
        last = n == len(_UNITS) - 1
        if not last and count >= _UNITS[n + 1][0]:
            continue
        tenths = _half_up_div(count * 10, unit)
        if tenths < 1000:
            return f"{sign}{tenths // 10}.{tenths % 10}{suffix}"
        whole = _half_up_div(count, unit)
        if whole < 1000 or last:
            return f"{sign}{whole}{suffix}"
        count = whole * unit  # 999.5K and up read as 1.0M
    raise AssertionError("unreachable")


def local_estimate_note(usd: float) -> str:
    return f"includes {format_money(usd)} of Cursor priced from local files, not Cursor's bill"
