"""The report and status objects of docs/report-json.md, built from day slices."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any, Final

from codeburn.cache import (
    Budget,
    ConversationSums,
    DaySlices,
    ImportSnapshot,
    Totals,
    merge_days,
)
from codeburn.providers import (
    CURSOR,
    GROKBOT_IMPORTED_PROJECT,
    IMPORTED_PROJECT,
    OTHER_MACHINES_PROJECT,
    PROVIDER_NAMES,
    UNMAPPED_PROJECT,
    USER_API_KEY,
    day_end_ms,
    display_name,
    iso_utc,
    local_midnight_ms,
    now_ms,
)
from codeburn.server.names import REPORT_SCHEMA, STATUS_SCHEMA
from codeburn.server.service.alerts import DEFAULT_INCLUDED_PERCENT, alert_conditions
from codeburn.server.service.attribution import KINDS
from codeburn.server.service.forecast import Cycle, DayFigures
from codeburn.server.service.forecast import project as project_forecast
from codeburn.server.service.formatting import local_estimate_note
from codeburn.server.service.json_out import finite
from codeburn.server.service.periods import Period
from codeburn.server.service.projects import ProjectNames

ALL_PROVIDERS: Final = frozenset(PROVIDER_NAMES)
WARNING_SHARE: Final = 0.8
TOP_CONVERSATIONS: Final = 50
# Rows of the project table that are no folder's project: never the top project, and summed
# into `noProjectCost` (docs/figures.md).
NOT_A_PROJECT: Final = frozenset(
    {IMPORTED_PROJECT, GROKBOT_IMPORTED_PROJECT, OTHER_MACHINES_PROJECT, UNMAPPED_PROJECT}
)


def providers_for(choice: str) -> frozenset[str]:
    return ALL_PROVIDERS if choice == "all" else frozenset({choice})


def _rows(items: Iterable[tuple[dict[str, Any], Totals]], name_key: str) -> list[dict[str, Any]]:
    rows = [{**head, **totals.to_json()} for head, totals in items if totals.calls]
    rows.sort(key=lambda r: (-r["cost"], str(r[name_key])))
    return rows


def _period_slices(
    days: dict[date, DaySlices], period: Period, providers: frozenset[str]
) -> tuple[DaySlices, list[tuple[date, Totals]]]:
    """The period's slices merged, and each day's totals over `providers` (the sums a merge
    of that day alone would give: no day's models and projects are merged for them)."""
    in_range = [(d, s) for d, s in sorted(days.items()) if period.start <= d <= period.end]
    per_day = [(d, _total(slices, providers)) for d, slices in in_range]
    return merge_days((s for _, s in in_range), providers), per_day


def _total(slices: DaySlices, providers: frozenset[str] | None = None) -> Totals:
    """The slices' totals summed (of `providers` only, when given)."""
    total = Totals()
    for provider, part in slices.items():
        if providers is None or provider in providers:
            total.merge(part.totals)
    return total


def no_project(slices: DaySlices, providers: frozenset[str] | None = None) -> dict[str, float]:
    """`noProjectCost` and its estimated part, `noProjectEstimatedCost`: the spend in no folder's
    project ("Cursor (imported)", other machines and cloud agents, "(no project)"), so that a top
    project is never shown as if it were most of the spend (docs/figures.md)."""
    cost = estimated = 0.0
    for provider, part in slices.items():
        if providers is not None and provider not in providers:
            continue
        for project, totals in part.projects.items():
            if project in NOT_A_PROJECT:
                cost += totals.cost
                estimated += totals.estimated_cost
    return {"noProjectCost": cost, "noProjectEstimatedCost": estimated}


def _user_api_key(days: dict[date, DaySlices], period: Period, provider: str) -> dict[str, Any]:
    """Rows billed by the user's own API key: not Cursor spend, listed apart (API-rate estimate)."""
    in_period = (s for d, s in days.items() if period.start <= d <= period.end)
    part = merge_days(in_period, frozenset({USER_API_KEY}), conversations=False).get(USER_API_KEY)
    if part is None or provider not in ("all", CURSOR):
        return {"calls": 0, "tokens": 0, "apiCost": 0.0, "models": []}
    models: list[dict[str, Any]] = [
        {
            "model": m,
            "name": display_name(m),
            "calls": t.calls,
            "tokens": t.tokens,
            "apiCost": t.cost,
        }
        for m, t in part.models.items()
        if t.calls
    ]
    models.sort(key=lambda r: (-r["apiCost"], r["name"]))
    return {
        "calls": part.totals.calls,
        "tokens": part.totals.tokens,
        "apiCost": part.totals.cost,
        "models": models,
    }


def _coverage(snapshot: ImportSnapshot | None, period: Period, local_cost: float) -> dict[str, Any]:
    start, end = local_midnight_ms(period.start), day_end_ms(period.end)
    ranges = []
    if snapshot is not None:
        for r in snapshot.ranges:
            if r.start_ms <= end and r.end_ms >= start:
                ranges.append(
                    {"start": iso_utc(r.start_ms), "end": iso_utc(r.end_ms), "source": r.source}
                )
    return {"ranges": ranges, "localEstimateCost": local_cost}


def attribution_block(merged: DaySlices) -> dict[str, Any]:
    """How the period's exact Cursor events were attributed (docs/report-json.md): calls and
    cost each."""
    out: dict[str, Any] = {kind: {"calls": 0, "cost": 0.0} for kind in KINDS}
    for part in merged.values():
        for kind, (calls, cost) in part.attribution.items():
            if kind in out:
                out[kind]["calls"] += calls
                out[kind]["cost"] += cost
    return out


def conversation_rows(merged: DaySlices, limit: int = TOP_CONVERSATIONS) -> list[dict[str, Any]]:
    """The period's conversations, top `limit` by cost (then id); rows made for those only.
    A conversation of one provider is read as it is (copied only to merge another into)."""
    convs: dict[str, ConversationSums] = {}
    copied: set[str] = set()
    for part in merged.values():
        for cid, conv in part.conversation_sums().items():
            mine = convs.get(cid)
            if mine is None:
                convs[cid] = conv
                continue
            if cid not in copied:
                mine = convs[cid] = mine.copy()
                copied.add(cid)
            mine.merge(conv)
    top = sorted(
        ((cid, c) for cid, c in convs.items() if c.totals.calls),
        key=lambda item: (-item[1].totals.cost, item[0]),
    )[:limit]
    return [
        {
            "id": cid,
            "title": c.title,
            "project": c.project,
            "provider": c.provider,
            "models": sorted(c.models),
            "first": iso_utc(c.first_ms),
            "last": iso_utc(c.last_ms),
            **c.totals.to_json(),
        }
        for cid, c in top
    ]


def build_report(
    days: dict[date, DaySlices],
    period: Period,
    *,
    provider: str,
    timezone: str,
    snapshot: ImportSnapshot | None,
    cursor_sync: dict[str, Any] | None,
    warnings: list[str],
    diagnostics: list[str] | None = None,
    paths: dict[str, str] | None = None,
) -> dict[str, Any]:
    """`paths`: project slug → its folder (`projects.ProjectNames`)."""
    providers = providers_for(provider)
    names = ProjectNames(paths)
    merged, per_day = _period_slices(days, period, providers)
    models: dict[tuple[str, str], Totals] = {}
    projects: dict[str, Totals] = {}
    tools: dict[str, list[dict[str, Any]]] = {}  # project → its split by tool
    unpriced: dict[str, list[int]] = {}
    for provider_id, part in merged.items():
        for model, totals in part.models.items():
            models[(provider_id, model)] = totals
        for project, totals in part.projects.items():
            projects.setdefault(project, Totals()).merge(totals)
            if totals.calls:
                tools.setdefault(project, []).append(
                    {
                        "id": provider_id,
                        "name": PROVIDER_NAMES.get(provider_id, provider_id),
                        "cost": totals.cost,
                        "estimatedCost": totals.estimated_cost,
                        "calls": totals.calls,
                    }
                )
        for model, (calls, tokens) in part.unpriced.items():
            entry = unpriced.setdefault(model, [0, 0])
            entry[0] += calls
            entry[1] += tokens
    for split in tools.values():
        split.sort(key=lambda r: (-r["cost"], r["name"]))
    local_cost = sum(part.local_cost for part in merged.values())
    report: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "period": {
            "label": period.label,
            "from": period.start.isoformat(),
            "to": period.end.isoformat(),
            "timezone": timezone,
        },
        "totals": {**_total(merged).to_json(), **no_project(merged)},
        "providers": _rows(
            (({"id": p, "name": PROVIDER_NAMES.get(p, p)}, s.totals) for p, s in merged.items()),
            "name",
        ),
        "models": _rows(
            (
                ({"model": m, "name": display_name(m), "provider": p}, t)
                for (p, m), t in models.items()
            ),
            "name",
        ),
        "projects": _rows(
            (({**names.fields(p), "providers": tools.get(p, [])}, t) for p, t in projects.items()),
            "project",
        ),
        "days": [{"date": d.isoformat(), **t.to_json()} for d, t in per_day if t.calls],
        "unpricedModels": sorted(
            ({"model": m, "calls": c, "tokens": t} for m, (c, t) in unpriced.items()),
            key=lambda r: (-r["tokens"], r["model"]),
        ),
        "coverage": _coverage(snapshot, period, local_cost),
        "userApiKey": _user_api_key(days, period, provider),
        "attribution": attribution_block(merged),
        "conversations": conversation_rows(merged),
        "cursorSync": cursor_sync,
        "warnings": warnings,
        "diagnostics": list(diagnostics or []),
    }
    return finite(report)  # valid JSON: no Infinity or NaN


def budget_block(budget: Budget, today_cost: float, month_cost: float) -> dict[str, Any]:
    level = "ok"
    for limit, spent in ((budget.daily, today_cost), (budget.monthly, month_cost)):
        if limit:
            if spent >= limit:
                level = "over"
            elif spent >= WARNING_SHARE * limit and level == "ok":
                level = "warning"
    return {"daily": budget.daily, "monthly": budget.monthly, "level": level}


def _summary(slices: DaySlices) -> dict[str, Any]:
    total = _total(slices)
    return {
        "cost": total.cost,
        "estimatedCost": total.estimated_cost,
        "billedCost": total.billed_cost,
        "listPriceCost": total.list_price_cost,
        "calls": total.calls,
        **no_project(slices),
        "providers": provider_summary(slices),
    }


def provider_summary(slices: DaySlices) -> list[dict[str, Any]]:
    """Per tool, for the tooltip's one line each (docs/other-tools.md): cost descending."""
    rows: list[dict[str, Any]] = [
        {
            "id": provider,
            "name": PROVIDER_NAMES.get(provider, provider),
            "cost": part.totals.cost,
            "estimatedCost": part.totals.estimated_cost,
            "calls": part.totals.calls,
        }
        for provider, part in slices.items()
        if part.totals.calls
    ]
    rows.sort(key=lambda r: (-r["cost"], r["name"]))
    return rows


def top_models(month: DaySlices, limit: int = 5) -> list[dict[str, Any]]:
    by_name: dict[str, list[float]] = {}
    for part in month.values():
        for model, totals in part.models.items():
            entry = by_name.setdefault(display_name(model), [0.0, 0, 0.0])
            entry[0] += totals.cost
            entry[1] += totals.calls
            entry[2] += totals.estimated_cost
    rows: list[dict[str, Any]] = [
        {"name": n, "cost": c, "calls": int(k), "estimatedCost": e}
        for n, (c, k, e) in by_name.items()
        if k
    ]
    rows.sort(key=lambda r: (-r["cost"], r["name"]))
    return rows[:limit]


def top_project(month: DaySlices, names: ProjectNames) -> dict[str, Any] | None:
    """This month's costliest project of this machine (`project`, `name`, `path`, `cost`,
    `estimatedCost`), or None: imported, other machines' and unmapped usage are no project of
    this machine (the status's `noProjectCost` says how much that is)."""
    costs: dict[str, list[float]] = {}
    for part in month.values():
        for project, totals in part.projects.items():
            if project not in NOT_A_PROJECT and totals.calls:
                entry = costs.setdefault(project, [0.0, 0.0])
                entry[0] += totals.cost
                entry[1] += totals.estimated_cost
    if not costs:
        return None
    project = min(costs, key=lambda p: (-costs[p][0], p))
    cost, estimated = costs[project]
    return {**names.fields(project), "cost": cost, "estimatedCost": estimated}


def day_figures(
    days: dict[date, DaySlices], counted: frozenset[str] = ALL_PROVIDERS
) -> dict[date, DayFigures]:
    """Each day's figures of what the status bar counts (the forecast's input)."""
    out = {}
    for day, slices in days.items():
        total = _total(slices, counted)
        out[day] = DayFigures(total.cost, total.estimated_cost, total.calls)
    return out


def cycle_block(
    days: dict[date, DaySlices],
    cycle: Cycle,
    today: date,
    counted: frozenset[str] = ALL_PROVIDERS,
) -> dict[str, Any]:
    """The status object's `cycle`: its local days, where they come from, and its figures."""
    slices = merge_days(
        (s for d, s in days.items() if cycle.start <= d <= min(cycle.end, today)),
        counted,
        conversations=False,
    )
    return {
        "start": cycle.start.isoformat(),
        "end": cycle.end.isoformat(),
        "source": cycle.source,
        **_summary(slices),
    }


def forecast_block(
    days: dict[date, DaySlices],
    cycle: Cycle,
    today: date,
    quota: dict[str, Any] | None,
    counted: frozenset[str] = ALL_PROVIDERS,
) -> dict[str, Any] | None:
    """The status object's `forecast` at the process's clock (docs/forecast.md): of what the
    status bar counts; the pools and on-demand figures are Cursor's alone (from the quota)."""
    return project_forecast(
        day_figures(days, counted),
        cycle,
        today=today,
        now_ms=now_ms(),
        start_ms=local_midnight_ms(cycle.start),
        quota=quota,
    )


def build_status(
    days: dict[date, DaySlices],
    *,
    today: date,
    state: str,
    message: str | None,
    budget: Budget,
    quota: dict[str, Any] | None,
    cursor_sync: dict[str, Any] | None,
    warnings: list[str] | None = None,
    unreadable: dict[str, int] | None = None,
    diagnostics: list[str] | None = None,
    paths: dict[str, str] | None = None,
    cycle: Cycle | None = None,
    budget_period: str = "month",
    included_percent: Sequence[float] = DEFAULT_INCLUDED_PERCENT,
    providers: frozenset[str] | None = None,
) -> dict[str, Any]:
    """`paths`: project slug → its folder (`projects.ProjectNames`); `cycle`: the billing cycle
    (`cycle` and `forecast` are null without it); `budget_period`: what the monthly budget
    counts, `month` or `cycle` (what the status bar's second figure shows); `included_percent`:
    the included-usage thresholds of `alerts`; `providers`: the tools the figures, budgets, top
    lists and forecast count (the `codeburn.providers` setting; None: all)."""
    counted = providers or ALL_PROVIDERS
    today_slices = merge_days([days.get(today, {})], counted, conversations=False)
    month_slices = merge_days(
        (
            s
            for d, s in days.items()
            if d.year == today.year and d.month == today.month and d <= today
        ),
        counted,
        conversations=False,
    )
    local_cost = sum(part.local_cost for part in month_slices.values())
    today_total = _total(today_slices).cost
    month_total = _total(month_slices).cost
    cycle_summary = cycle_block(days, cycle, today, counted) if cycle is not None else None
    if budget_period == "cycle" and cycle_summary is not None:
        month_total = cycle_summary["cost"]
    status: dict[str, Any] = {
        "schema": STATUS_SCHEMA,
        "generatedAt": iso_utc(now_ms()),
        "state": state,
        "message": message,
        "today": _summary(today_slices),
        "month": _summary(month_slices),
        "localEstimateNote": local_estimate_note(local_cost) if local_cost > 0 else None,
        "topModels": top_models(month_slices),
        "topProject": top_project(month_slices, ProjectNames(paths)),
        "budget": budget_block(budget, today_total, month_total),
        "quota": quota,
        "cycle": cycle_summary,
        "forecast": (
            forecast_block(days, cycle, today, quota, counted) if cycle is not None else None
        ),
        "cursorSync": cursor_sync,
        "warnings": list(warnings or []),
        "diagnostics": list(diagnostics or []),
        "unreadable": unreadable_block(unreadable or {}),
    }
    status["alerts"] = alert_conditions(
        status, today=today, budget_period=budget_period, included_percent=included_percent
    )
    return finite(status)  # valid JSON: no Infinity or NaN


def unreadable_block(unreadable: dict[str, int]) -> dict[str, Any]:
    """Conversations that exist but could not be read: how many, and why (never a silent $0)."""
    reasons = {reason: n for reason, n in sorted(unreadable.items()) if n > 0}
    return {"count": sum(reasons.values()), "reasons": reasons}
