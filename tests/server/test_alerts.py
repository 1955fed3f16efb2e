"""`status.alerts` from a status object: each condition, its level, its wording."""

from __future__ import annotations

from datetime import date
from typing import Any

from codeburn.server.service.alerts import alert_conditions, combined_message

DAY = date(2026, 12, 6)


def _status(**parts: Any) -> dict[str, Any]:
    status: dict[str, Any] = {
        "today": {"cost": 1.0, "estimatedCost": 0.0},
        "month": {"cost": 10.0, "estimatedCost": 0.0},
        "budget": {"daily": None, "monthly": None},
        "cycle": {"start": "2026-11-15", "end": "2026-12-14", "source": "cursor", "cost": 10.0},
        "quota": None,
        "forecast": None,
    }
    status.update(parts)
    return status


def _quota(percent: float, used_cents: int, limit_cents: int | None) -> dict[str, Any]:
    return {
        "available": True,
        "pools": [{"id": "other-models", "label": "Other models", "percentUsed": percent}],
        "onDemand": {"enabled": True, "usedCents": used_cents, "limitCents": limit_cents},
    }


def test_nothing_holds_without_budgets_quota_or_forecast() -> None:
    assert alert_conditions(_status(), today=DAY) == []


def test_pools_and_on_demand_thresholds_with_levels() -> None:
    alerts = alert_conditions(_status(quota=_quota(101.0, 5000, 5000)), today=DAY)
    assert [(a["id"], a["level"]) for a in alerts] == [
        ("pool-other-models:80:2026-11-15", "warning"),
        ("pool-other-models:100:2026-11-15", "error"),
        ("on-demand:started:2026-11-15", "warning"),
        ("on-demand-limit:80:2026-11-15", "warning"),
        ("on-demand-limit:100:2026-11-15", "error"),
    ]
    level, text = combined_message(alerts)
    assert level == "error"
    assert text == (
        "CodeBurn: Other models has used all of its included usage (101%); "
        "Cursor is now billing on-demand: $50.00 so far this cycle; "
        "on-demand spend $50.00 has reached your $50.00 limit"
    )
    fewer = alert_conditions(
        _status(quota=_quota(79.0, 0, None)), today=DAY, included_percent=(50.0,)
    )
    assert [a["id"] for a in fewer] == ["pool-other-models:50:2026-11-15"]
    unreadable = {**_quota(101.0, 5000, 5000), "available": False}
    assert alert_conditions(_status(quota=unreadable), today=DAY) == []


def test_forecast_over_the_budget_of_the_period_shown_keeps_the_estimate_sign() -> None:
    forecast = {
        "cycleEnd": "2026-12-14",
        "projectedCost": 140.0,
        "basis": "mixed",
        "projectedOnDemand": 80.0,
        "onDemandLimit": 50.0,
    }
    status = _status(forecast=forecast, budget={"daily": None, "monthly": 100.0})
    # the cycle is Cursor's, the bar shows the month: the budget is not the cycle's
    month = alert_conditions(status, today=DAY)
    assert [a["id"] for a in month] == ["forecast-on-demand:over:2026-11-15"]
    cycle = alert_conditions(status, today=DAY, budget_period="cycle")
    assert [(a["id"], a["level"], a["message"]) for a in cycle] == [
        (
            "forecast-budget:over:2026-11-15:100.0",
            "warning",
            "At this pace: ~$140 by Dec 14, over your $100 budget",
        ),
        (
            "forecast-on-demand:over:2026-11-15",
            "warning",
            "At this pace: on-demand ~$80.00 by Dec 14, over your $50.00 limit",
        ),
    ]
