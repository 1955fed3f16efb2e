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
    """The part of the estimate that Cursor's local files gave and a sync or an import would
    replace (`localEstimateNote`; docs/figures.md): said as a part of the estimate, with its `~`,
    so that it never reads as a second, competing estimate."""
    return (
        f"~{format_money(usd)} of the estimate is from Cursor's local files"
        " — sync or import for exact figures"
    )


# The three parts of a cost (docs/report-json.md: billed + list price + estimated = cost), in
# this order.
SPLIT_LABELS: Final = (
    ("billed", "billed by Cursor"),
    ("listPrice", "exact tokens at list price"),
    ("estimated", "estimated"),
)


def _places(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _units(text: str) -> int:
    return int(text.lstrip("~<$").replace(",", "").replace(".", ""))


def _adjust(units: list[int], rest: list[float], parts: list[float], gap: int) -> None:
    """Largest remainder: move the rounded parts by whole units until they sum to the total."""
    while gap != 0:
        step = 1 if gap > 0 else -1
        pool = [i for i, v in enumerate(parts) if v > 0 and (step > 0 or units[i] > 0)]
        if not pool:
            return
        pick = max(pool, key=lambda i: rest[i]) if step > 0 else min(pool, key=lambda i: rest[i])
        units[pick] += step
        rest[pick] -= step
        gap -= step


def split_money(cost: float, parts: list[float]) -> list[str]:
    """`parts` (billed, list price, estimated) as money texts that add up to `format_money(cost)`
    on screen: the total's decimals for each, rounded half up, then moved by largest remainder;
    an estimated part carries `~`, a part that rounds to nothing reads `<$0.01`, none `$0.00`."""
    total = format_money(cost)
    values = [max(0.0, p) if math.isfinite(p) else 0.0 for p in parts]
    if total.startswith(("<", "$?")) or cost >= 1e15:
        texts = [format_money(v) for v in values]
    else:
        places = _places(total)
        scale = 10**places
        units = [int(_rounded(v, places).scaleb(places)) for v in values]
        rest = [v * scale - u for v, u in zip(values, units, strict=True)]
        _adjust(units, rest, values, _units(total) - sum(units))
        unit = Decimal(1).scaleb(-places)
        texts = [
            "$0.00" if v == 0 else f"<${unit}" if u == 0 else f"${Decimal(u).scaleb(-places):,}"
            for u, v in zip(units, values, strict=True)
        ]
    return [
        ("~" + t if i == 2 and v > 0 else t)
        for i, (t, v) in enumerate(zip(texts, values, strict=True))
    ]


def split_text(cost: float, billed: float, list_price: float, estimated: float) -> str:
    """`$6.76 billed by Cursor + $1.13 exact tokens at list price + ~$0.66 estimated`, or
    `all estimated` (`all billed by Cursor`, ...) when one part is the whole; "" for $0."""
    parts = [billed, list_price, estimated]
    shown = [i for i, p in enumerate(parts) if p > 0]
    if not shown or not cost > 0:
        return ""
    if len(shown) == 1:
        return f"all {SPLIT_LABELS[shown[0]][1]}"
    texts = split_money(cost, parts)
    return " + ".join(f"{texts[i]} {SPLIT_LABELS[i][1]}" for i in shown)
