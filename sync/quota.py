"""Plan quota from cursor.com's usage summary (docs/quota.md), fetched at most every 5 minutes.

The JSON object this module returns is `status.quota`; docs/quota.md describes it. A shape we
cannot read is "quota unavailable", never 0 %.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, Literal

from codeburn.cache import LockTimeoutError, cache_dir, locked, read_json, write_cache_json
from codeburn.providers import is_date_ms, iso_utc, load_token, parse_iso_ms
from codeburn.providers import now_ms as clock_ms
from codeburn.sync.auth import Credentials, credentials_for
from codeburn.sync.client import BaseUrlError, CursorClient, RequestFailed, base_url

log = logging.getLogger(__name__)

QUOTA_FILE = "cursor-quota.v1.json"
UNAVAILABLE = "quota unavailable"
Reason = Literal["login", "network", "format"]


def quota_path() -> Path:
    return cache_dir() / QUOTA_FILE


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _cents(value: Any) -> int | float | None:
    number = _number(value)
    if number is None:
        return None
    return int(number) if number.is_integer() else number


def _time(value: Any) -> str | None:
    """ISO time of an epoch-ms number or ISO string; None when absent; ValueError when it is
    given but not a time from 1970 to 2100 (the whole answer is then unreadable)."""
    if value is None:
        return None
    text = value.strip() if isinstance(value, str) else None
    if text is not None and text.isascii() and text.isdigit():
        ms: Any = int(text)
    elif text is not None:
        ms = parse_iso_ms(text)
    else:
        ms = value
    if not is_date_ms(ms):
        raise ValueError(f"not a time: {str(value)[:40]!r}")
    return iso_utc(int(ms))


def _pool(pool_id: str, label: str, percent: float | None, block: Any = None) -> dict[str, Any]:
    used = _cents(block.get("used")) if isinstance(block, dict) else None
    limit = _cents(block.get("limit")) if isinstance(block, dict) else None
    if percent is None and used is not None and limit:
        percent = used / limit * 100
        percent = percent if math.isfinite(percent) else None
    return {
        "id": pool_id,
        "label": label,
        "percentUsed": percent,
        "usedCents": used,
        "limitCents": limit,
    }


def _personal_pools(plan: Any) -> list[dict[str, Any]]:
    if not isinstance(plan, dict):
        return []
    pools = []
    auto = _number(plan.get("autoPercentUsed"))
    api = _number(plan.get("apiPercentUsed"))
    if auto is not None:
        pools.append(_pool("cursor-models", "Cursor models", auto))
    if api is not None:
        pools.append(_pool("other-models", "Other models", api))
    if not pools:
        pool = _pool("plan", "Included usage", None, plan)
        if pool["percentUsed"] is not None:
            pools.append(pool)
    return pools


def _team_pools(summary: dict[str, Any]) -> list[dict[str, Any]]:
    individual = summary.get("individualUsage")
    team = summary.get("teamUsage")
    pools = []
    if isinstance(individual, dict):
        pool = _pool("individual", "Your limit", None, individual.get("overall"))
        if pool["percentUsed"] is not None:
            pools.append(pool)
    if isinstance(team, dict):
        pool = _pool("team", "Team pool", None, team.get("pooled"))
        if pool["percentUsed"] is not None:
            pools.append(pool)
    return pools


def _spend(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    used = _cents(block.get("used"))
    if used is None:
        return None
    enabled = block.get("enabled")
    return {
        "enabled": enabled if isinstance(enabled, bool) else used > 0,
        "usedCents": used,
        "limitCents": _cents(block.get("limit")),
    }


def _empty(fetched_ms: int, reason: Reason | None) -> dict[str, Any]:
    return {
        "available": reason is None,
        "message": UNAVAILABLE if reason is not None else None,
        "reason": reason,
        "fetchedAt": iso_utc(fetched_ms),
        "stale": False,
        "membershipType": None,
        "billingCycleStart": None,
        "billingCycleEnd": None,
        "pools": [],
        "binding": None,
        "totalPercentUsed": None,
        "plan": None,
        "onDemand": None,
    }


def unavailable(fetched_ms: int, reason: Reason) -> dict[str, Any]:
    """The explicit "quota unavailable" result."""
    return _empty(fetched_ms, reason)


def parse_usage_summary(summary: Any, fetched_ms: int) -> dict[str, Any]:
    """The `status.quota` object for a usage-summary answer; unavailable when unreadable."""
    if not isinstance(summary, dict):
        return unavailable(fetched_ms, "format")
    individual = summary.get("individualUsage")
    individual = individual if isinstance(individual, dict) else {}
    plan = individual.get("plan")
    pools = _personal_pools(plan) + _team_pools(summary)
    if not pools:
        return unavailable(fetched_ms, "format")
    result = _empty(fetched_ms, None)
    membership = summary.get("membershipType")
    team = summary.get("teamUsage")
    on_demand = _spend(individual.get("onDemand"))
    if on_demand is None and isinstance(team, dict):
        on_demand = _spend(team.get("onDemand"))
    try:
        cycle = _time(summary.get("billingCycleStart")), _time(summary.get("billingCycleEnd"))
    except ValueError:
        return unavailable(fetched_ms, "format")
    result.update(
        membershipType=membership if isinstance(membership, str) and membership else None,
        billingCycleStart=cycle[0],
        billingCycleEnd=cycle[1],
        pools=pools,
        binding=max(pools, key=lambda pool: pool["percentUsed"]),
        totalPercentUsed=_number(plan.get("totalPercentUsed")) if isinstance(plan, dict) else None,
        plan=_spend(plan),
        onDemand=on_demand,
    )
    if result["plan"] is not None:
        del result["plan"]["enabled"]
    return result


def _cached(account: str, now: int, max_age_s: int) -> dict[str, Any] | None:
    """The cached result for this account when its last attempt is recent enough."""
    data = read_json(quota_path())
    if not isinstance(data, dict) or data.get("account") != account:
        return None
    attempted = parse_iso_ms(data.get("attemptedAt") or "")
    quota = data.get("quota")
    if (
        attempted is None
        or not isinstance(quota, dict)
        or not 0 <= now - attempted < max_age_s * 1000
    ):
        return None
    return quota


def _last_good(account: str) -> dict[str, Any] | None:
    data = read_json(quota_path())
    if not isinstance(data, dict) or data.get("account") != account:
        return None
    good = data.get("lastGood")
    return good if isinstance(good, dict) and good.get("available") is True else None


def _fetch(credentials: Credentials, now: int) -> dict[str, Any]:
    try:
        answer = CursorClient(credentials, base=base_url()).usage_summary()
    except BaseUrlError as exc:
        log.warning("quota not read: %s", exc)
        return unavailable(now, "network")
    except RequestFailed as exc:
        log.info("quota not read: %s", exc)
        if exc.kind == "login":
            return unavailable(now, "login")
        return unavailable(now, "format" if exc.kind == "export" else "network")
    return parse_usage_summary(answer, now)


def read_quota(
    db_path: Path, *, max_age_s: int = 300, now_ms: int | None = None
) -> dict[str, Any] | None:
    """`status.quota`: cached for `max_age_s`; None when Cursor is not signed in."""
    now = clock_ms() if now_ms is None else now_ms
    token = load_token(db_path)
    credentials = credentials_for(token) if token is not None else None
    if token is None or credentials is None:
        return None
    if token.expires_within(now, 60):
        return unavailable(now, "login")
    try:
        with locked(quota_path()):
            cached = _cached(credentials.account, now, max_age_s)
            if cached is not None:
                return cached
            result = _fetch(credentials, now)
            good = result if result["available"] else _last_good(credentials.account)
            if not result["available"] and good is not None and result["reason"] == "network":
                result = {**good, "stale": True}
            write_cache_json(
                quota_path(),
                {
                    "account": credentials.account,
                    "attemptedAt": iso_utc(now),
                    "quota": result,
                    "lastGood": good,
                },
            )
            return result
    except LockTimeoutError:
        return _cached(credentials.account, now, max_age_s) or unavailable(now, "network")
