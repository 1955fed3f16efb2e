"""Plan quota from the fake cursor.com usage summary: shapes, cache, and "quota unavailable"."""

from __future__ import annotations

import json
import stat
from typing import Any

import pytest

from codeburn.providers.localtime import now_ms
from codeburn.sync.quota import parse_usage_summary, quota_path, read_quota
from tests.sync.fake_cursor import PERSONAL_SUMMARY, TEAM_SUMMARY, TEST_SUB, SyncEnv

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


QUOTA_KEYS = {
    "available",
    "message",
    "reason",
    "fetchedAt",
    "stale",
    "membershipType",
    "billingCycleStart",
    "billingCycleEnd",
    "pools",
    "binding",
    "totalPercentUsed",
    "plan",
    "onDemand",
}


@pytest.mark.clock
def test_personal_plan(sync_env: SyncEnv) -> None:
    quota = read_quota(sync_env.db_path)
    assert quota is not None
    assert set(quota) == QUOTA_KEYS
    assert quota["available"] is True and quota["message"] is None and quota["reason"] is None
    assert quota["membershipType"] == "pro"
    assert quota["billingCycleStart"] == "2026-11-05T04:38:09.000Z"
    assert quota["billingCycleEnd"] == "2026-12-05T04:38:09.000Z"
    assert [(p["id"], p["label"], p["percentUsed"]) for p in quota["pools"]] == [
        ("cursor-models", "Cursor models", 12.5),
        ("other-models", "Other models", 64.25),
    ]
    assert quota["binding"]["id"] == "other-models"
    assert quota["totalPercentUsed"] == 38.4
    assert quota["plan"] == {"usedCents": 1500, "limitCents": 2000}
    assert quota["onDemand"] == {"enabled": True, "usedCents": 1625, "limitCents": 5000}
    [request] = sync_env.fake.summary_requests()
    assert request.headers["accept"] == "application/json"
    assert request.headers["origin"] == "https://cursor.com"
    assert request.headers["cookie"] == sync_env.fake.expected_cookie
    assert sync_env.fake.export_requests() == []


@pytest.mark.clock
def test_team_shape(sync_env: SyncEnv) -> None:
    sync_env.fake.summary = TEAM_SUMMARY
    quota = read_quota(sync_env.db_path)
    assert quota is not None and quota["available"] is True
    assert quota["membershipType"] == "enterprise"
    pools = {p["id"]: p for p in quota["pools"]}
    assert pools["individual"]["percentUsed"] == 25.0
    assert pools["individual"]["usedCents"] == 1250
    assert pools["individual"]["limitCents"] == 5000
    assert pools["team"]["percentUsed"] == 12.0
    assert quota["binding"]["id"] == "individual"
    assert quota["plan"] is None and quota["totalPercentUsed"] is None
    assert quota["onDemand"] == {"enabled": True, "usedCents": 640, "limitCents": None}


@pytest.mark.parametrize(
    "summary",
    [
        {"something": "else"},
        [],
        {"individualUsage": {"plan": {"used": 0, "limit": 0}}},
        {"individualUsage": {"plan": {"autoPercentUsed": "12%", "apiPercentUsed": None}}},
        {"individualUsage": {"overall": {"used": 5}}, "teamUsage": {"pooled": "x"}},
        {"individualUsage": {"plan": {"autoPercentUsed": float("nan")}}},
    ],
)
@pytest.mark.clock
def test_unknown_shape_is_unavailable_never_zero(sync_env: SyncEnv, summary: Any) -> None:
    sync_env.fake.summary = summary
    quota = read_quota(sync_env.db_path)
    assert quota is not None
    assert quota["available"] is False
    assert quota["message"] == "quota unavailable"
    assert quota["reason"] == "format"
    assert quota["binding"] is None and quota["pools"] == []


@pytest.mark.clock
def test_not_json_is_unavailable(sync_env: SyncEnv) -> None:
    sync_env.fake.summary = b"<html>SERVER SECRET TEXT</html>"
    quota = read_quota(sync_env.db_path)
    assert quota is not None and (quota["available"], quota["reason"]) == (False, "format")


def test_percent_from_cents_when_pool_percentages_are_missing() -> None:
    quota = parse_usage_summary({"individualUsage": {"plan": {"used": 500, "limit": 2000}}}, 0)
    assert quota["available"] is True
    assert [(p["id"], p["percentUsed"]) for p in quota["pools"]] == [("plan", 25.0)]


@pytest.mark.clock
def test_cached_for_five_minutes_per_account(sync_env: SyncEnv) -> None:
    now = now_ms()
    first = read_quota(sync_env.db_path, now_ms=now)
    assert read_quota(sync_env.db_path, now_ms=now + 299_999) == first
    assert len(sync_env.fake.summary_requests()) == 1
    assert stat.S_IMODE(quota_path().stat().st_mode) == 0o600
    read_quota(sync_env.db_path, now_ms=now + 300_000)
    assert len(sync_env.fake.summary_requests()) == 2
    sync_env.sign_in("auth0|someone_else", sync_env.exp, "someone_else")
    read_quota(sync_env.db_path, now_ms=now + 300_001)
    assert len(sync_env.fake.summary_requests()) == 3


@pytest.mark.clock
def test_corrupt_cache_is_a_miss(sync_env: SyncEnv) -> None:
    quota_path().parent.mkdir(parents=True, exist_ok=True)
    quota_path().write_bytes(b"{{{")
    quota = read_quota(sync_env.db_path)
    assert quota is not None and quota["available"] is True
    assert json.loads(quota_path().read_bytes())["quota"] == quota


@pytest.mark.clock
def test_not_signed_in_is_none_without_request(sync_env: SyncEnv) -> None:
    sync_env.sign_out()
    assert read_quota(sync_env.db_path) is None
    assert sync_env.fake.requests == []


@pytest.mark.clock
def test_expired_login_is_unavailable_without_request(sync_env: SyncEnv) -> None:
    sync_env.sign_in(TEST_SUB, now_ms() // 1000 - 10, "user_sync_test")
    quota = read_quota(sync_env.db_path)
    assert quota is not None and (quota["available"], quota["reason"]) == (False, "login")
    assert sync_env.fake.requests == []


@pytest.mark.clock
def test_rejected_login_is_unavailable(sync_env: SyncEnv) -> None:
    sync_env.fake.summary_mode = "401"
    quota = read_quota(sync_env.db_path)
    assert quota is not None and (quota["available"], quota["reason"]) == (False, "login")


@pytest.mark.clock
def test_network_trouble_serves_last_good_as_stale(sync_env: SyncEnv) -> None:
    now = now_ms()
    good = read_quota(sync_env.db_path, now_ms=now)
    assert good is not None and good["stale"] is False
    sync_env.fake.summary_mode = "500"
    stale = read_quota(sync_env.db_path, now_ms=now + 300_000)
    assert stale is not None
    assert stale["stale"] is True and stale["available"] is True
    assert stale["pools"] == good["pools"]


@pytest.mark.clock
def test_network_trouble_without_history_is_unavailable(sync_env: SyncEnv) -> None:
    sync_env.fake.summary_mode = "truncated"
    quota = read_quota(sync_env.db_path)
    assert quota is not None and (quota["available"], quota["reason"]) == (False, "network")


@pytest.mark.parametrize(
    "cycle_start",
    [10**20, "99999999999999999999", "9999-12-31T23:59:59.999Z", -1, 1e300],
)
@pytest.mark.clock
def test_a_billing_cycle_time_out_of_range_is_unavailable(
    sync_env: SyncEnv, cycle_start: Any
) -> None:
    sync_env.fake.summary = {**PERSONAL_SUMMARY, "billingCycleStart": cycle_start}
    quota = read_quota(sync_env.db_path)
    assert quota is not None
    assert (quota["available"], quota["message"], quota["reason"]) == (
        False,
        "quota unavailable",
        "format",
    )


@pytest.mark.parametrize(
    "plan",
    [
        {"used": 10**400, "limit": 2000},
        {"used": 1e308, "limit": 1e-308},
        {"used": 1500, "limit": 2000, "autoPercentUsed": 10**400},
    ],
)
def test_numbers_no_float_can_hold_never_become_infinity(plan: dict[str, Any]) -> None:
    quota = parse_usage_summary({"individualUsage": {"plan": plan}}, 0)
    text = json.dumps(quota, allow_nan=False)  # raises on Infinity or NaN
    assert "Infinity" not in text
    if quota["available"]:
        assert all(p["percentUsed"] is not None for p in quota["pools"])
    else:
        assert quota["reason"] == "format"
