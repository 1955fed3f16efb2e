"""The status object's `alerts`: the conditions that hold now (docs/forecast.md, "Alerts").

Pure: a status object in, `[{"id", "level", "message"}]` out. Each id is stable for its condition
and period (the cycle's first day, today, or the month), so the language server shows each one
once per period whichever editor window sees it first. Budget crossings are conditions too: one
place words every message the server shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, Final

from codeburn.server.service.formatting import format_money

DEFAULT_INCLUDED_PERCENT: Final = (80.0, 100.0)
WARNING_SHARE: Final = 0.8
ON_DEMAND_STEPS: Final = (80, 100)
LEVELS: Final = {"info": 0, "warning": 1, "error": 2}


def _money(usd: float, estimated: bool = False) -> str:
    return ("~" if estimated else "") + format_money(usd)


def _dollars(usd: float) -> str:
    """Cursor's own figures are whole cents: `$0.42`, `$1,250.00`."""
    return f"${usd:,.2f}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _alert(group: str, step: str, period: str, level: str, message: str) -> dict[str, Any]:
    return {"id": f"{group}:{step}:{period}", "level": level, "message": message}


CURSOR_TOOLS: Final = frozenset({"cursor", "cursor-agent", "grokbot"})


def _spend_name(figures: Mapping[str, Any]) -> str:
    """ "AI spend" when the figures count another tool than Cursor's (their `providers`)."""
    providers = figures.get("providers")
    if isinstance(providers, list) and any(
        isinstance(p, Mapping) and p.get("id") not in CURSOR_TOOLS and p.get("calls")
        for p in providers
    ):
        return "AI spend"
    return "Cursor spend"


def _budget(status: Mapping[str, Any], today: date, budget_period: str) -> list[dict[str, Any]]:
    budget = status.get("budget") or {}
    cycle = status.get("cycle") or {}
    on_cycle = budget_period == "cycle" and cycle
    out = []
    for scope, block, period, what in (
        ("daily", "today", today.isoformat(), "today's"),
        (
            "monthly",
            "cycle" if on_cycle else "month",
            str(cycle.get("start")) if on_cycle else f"{today:%Y-%m}",
            "this cycle's" if on_cycle else "this month's",
        ),
    ):
        limit = _number(budget.get(scope))
        figures = status.get(block) or {}
        spent = _number(figures.get("cost")) or 0.0
        if not limit:
            continue
        approx = (_number(figures.get("estimatedCost")) or 0.0) > 0
        spend = f"{what} {_spend_name(figures)} {_money(spent, approx)}"
        group = f"budget-{scope}"
        tail = f"{period}:{limit!r}"
        if spent >= WARNING_SHARE * limit:
            share = int(WARNING_SHARE * 100)
            out.append(
                _alert(
                    group,
                    "warning",
                    tail,
                    "warning",
                    f"{spend} has reached {share}% of your {_money(limit)} {scope} budget",
                )
            )
        if spent >= limit:
            out.append(
                _alert(
                    group,
                    "over",
                    tail,
                    "error",
                    f"{spend} is over your {_money(limit)} {scope} budget",
                )
            )
    return out


def _included(
    quota: Mapping[str, Any], included_percent: Sequence[float], cycle: str
) -> list[dict[str, Any]]:
    out = []
    for pool in quota.get("pools") or []:
        used = _number(pool.get("percentUsed"))
        if used is None:
            continue
        for step in sorted(set(included_percent)):
            if used < step:
                continue
            over = step >= 100
            text = (
                f"{pool.get('label')} has used all of its included usage ({used:.0f}%)"
                if over
                else f"{pool.get('label')} has used {used:.0f}% of its included usage"
            )
            out.append(
                _alert(
                    f"pool-{pool.get('id')}",
                    f"{step:g}",
                    cycle,
                    "error" if over else "warning",
                    text,
                )
            )
    return out


def _on_demand(quota: Mapping[str, Any], cycle: str) -> list[dict[str, Any]]:
    block = quota.get("onDemand")
    if not isinstance(block, Mapping):
        return []
    used = (_number(block.get("usedCents")) or 0.0) / 100
    limit_cents = _number(block.get("limitCents"))
    out = []
    if used > 0:
        out.append(
            _alert(
                "on-demand",
                "started",
                cycle,
                "warning",
                f"Cursor is now billing on-demand: {_dollars(used)} so far this cycle",
            )
        )
    if limit_cents:
        limit = limit_cents / 100
        for step in ON_DEMAND_STEPS:
            if used >= limit * step / 100:
                over = step >= 100
                text = (
                    f"on-demand spend {_dollars(used)} has reached your {_dollars(limit)} limit"
                    if over
                    else f"on-demand spend {_dollars(used)} has reached {step}% of your "
                    f"{_dollars(limit)} limit"
                )
                out.append(
                    _alert(
                        "on-demand-limit", str(step), cycle, "error" if over else "warning", text
                    )
                )
    return out


def _forecast(
    status: Mapping[str, Any], today: date, budget_period: str, cycle: str
) -> list[dict[str, Any]]:
    forecast = status.get("forecast")
    if not isinstance(forecast, Mapping):
        return []
    end = date.fromisoformat(str(forecast["cycleEnd"]))
    by = f"by {end:%b} {end.day}"
    approx = forecast.get("basis") != "exact"
    out = []
    monthly = _number((status.get("budget") or {}).get("monthly"))
    source = (status.get("cycle") or {}).get("source")
    # the monthly budget counts the status bar's period: the forecast is of the cycle, so it
    # is compared when that period is the cycle (or the cycle is the calendar month)
    if monthly and (budget_period == "cycle" or source == "calendar"):
        projected = float(forecast["projectedCost"])
        if projected > monthly:
            out.append(
                _alert(
                    "forecast-budget",
                    "over",
                    f"{cycle}:{monthly!r}",
                    "warning",
                    f"At this pace: {_money(projected, approx)} {by}, over your "
                    f"{_money(monthly)} budget",
                )
            )
    limit = _number(forecast.get("onDemandLimit"))
    projected_on_demand = _number(forecast.get("projectedOnDemand"))
    if limit and projected_on_demand is not None and projected_on_demand > limit:
        out.append(
            _alert(
                "forecast-on-demand",
                "over",
                cycle,
                "warning",
                f"At this pace: on-demand {_money(projected_on_demand, approx)} {by}, over "
                f"your {_money(limit)} limit",
            )
        )
    return out


def alert_conditions(
    status: Mapping[str, Any],
    *,
    today: date,
    budget_period: str = "month",
    included_percent: Sequence[float] = DEFAULT_INCLUDED_PERCENT,
) -> list[dict[str, Any]]:
    """Every condition that holds now, budget crossings first; within a group, in rising order."""
    cycle = str((status.get("cycle") or {}).get("start") or f"{today:%Y-%m}")
    out = _budget(status, today, budget_period)
    quota = status.get("quota")
    if isinstance(quota, Mapping) and quota.get("available") is True:
        out += _included(quota, included_percent, cycle)
        out += _on_demand(quota, cycle)
    out += _forecast(status, today, budget_period, cycle)
    return out


def group_of(alert: Mapping[str, Any]) -> str:
    return str(alert["id"]).split(":", 1)[0]


def combined_message(alerts: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(level, text) of one message naming every alert given, at the level of the worst. Of a
    group (a pool's thresholds, a budget's warning and over), the highest step is named."""
    named: dict[str, Mapping[str, Any]] = {}
    for alert in alerts:
        named[group_of(alert)] = alert  # rising order within a group: the last is the highest
    level = max((str(a["level"]) for a in alerts), key=lambda lv: LEVELS.get(lv, 0))
    parts = [str(a["message"]) for a in named.values()]
    return level, "CodeBurn: " + "; ".join(parts)
