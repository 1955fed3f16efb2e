"""The JSON usage events against a real loopback cursor.com: paging, envelopes, every failure,
the CSV fallback, kinds, team accounts, and one store whichever way an event came."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.daily_cache import daily_path
from codeburn.cache.imports.store import events_as_calls, import_file, load, store_path
from codeburn.providers import pricing
from codeburn.providers.localtime import iso_utc
from codeburn.server.cli.main import main
from codeburn.sync import client
from codeburn.sync.auth import account_of
from codeburn.sync.cursor_sync import SyncError, first_window_start, maybe_sync
from codeburn.sync.state import load_state, state_path
from tests.csv_fixtures import ExportRow, write_export
from tests.sync.fake_cursor import FIXED_NOW_MS, TEST_SUB, EventsMode, SyncEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = [pytest.mark.any_moment, pytest.mark.usefixtures("fixed_clock")]

HOUR = 3_600_000
NOW = FIXED_NOW_MS
PAST_THROTTLE = HOUR + 5 * 60_000 + 1
ACCOUNT = account_of(TEST_SUB)


def event(
    ms: int,
    model: str = "claude-4.5-sonnet",
    *,
    inp: int = 100,
    out: int = 50,
    cache_read: int = 1000,
    cache_write: int = 0,
    kind: str = "USAGE_EVENT_KIND_INCLUDED_IN_PRO",
    charged: float | None = None,
    fee: float | None = None,
    conversation: str | None = "conv-1",
    owner: str | None = None,
) -> dict[str, Any]:
    """An event as cursor.com sends it: numbers as strings, as most readers see them."""
    doc: dict[str, Any] = {
        "timestamp": str(ms),
        "model": model,
        "kind": kind,
        "maxMode": False,
        "isTokenBasedCall": True,
        "tokenUsage": {
            "inputTokens": str(inp),
            "outputTokens": out,
            "cacheWriteTokens": str(cache_write),
            "cacheReadTokens": str(cache_read),
            "totalCents": 1.5,
        },
        "owningTeam": "0",
    }
    if charged is not None:
        doc["chargedCents"] = charged
    if fee is not None:
        doc["cursorTokenFee"] = str(fee)
    if conversation is not None:
        doc["conversationId"] = conversation
    if owner is not None:
        doc["owningUser"] = owner
    return doc


def csv_row(ms: int, model: str = "claude-4.5-sonnet", **cells: Any) -> ExportRow:
    """The export row of `event(ms, model)` (same identity)."""
    return ExportRow(iso_utc(ms), model, input=100, output=50, cache_read=1000, **cells)


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(client, "EVENTS_PAGE_SIZE", 2)
    return 2


def store_doc() -> dict[str, Any]:
    return json.loads(store_path().read_bytes())


def test_three_pages_of_events_are_one_sync(sync_env: SyncEnv, small_pages: int) -> None:
    sync_env.fake.events = [event(NOW - (k + 1) * HOUR, conversation=f"conv-{k}") for k in range(5)]
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)

    assert outcome.summary is not None and outcome.summary["added"] == 5
    requests = sync_env.fake.events_requests()
    assert [r.body["page"] for r in requests] == [1, 2, 3]
    first = requests[0]
    assert first.body == {
        "teamId": 0,
        "startDate": str(first_window_start(NOW)),
        "endDate": str(NOW),
        "page": 1,
        "pageSize": small_pages,
    }
    assert first.headers["content-type"] == "application/json"
    assert first.headers["origin"] == "https://cursor.com"
    assert first.headers["cookie"] == sync_env.fake.expected_cookie
    assert sync_env.fake.export_requests() == []
    events = store_doc()["events"]
    assert sorted(e["usageEvent"]["conversationId"] for e in events) == [
        f"conv-{k}" for k in range(5)
    ]
    assert {(e["cells"], e["source"], e["account"]) for e in events} == {("json", "sync", ACCOUNT)}
    assert load_state().source == "json"


def test_a_count_only_last_page_ends_the_sync(sync_env: SyncEnv, small_pages: int) -> None:
    sync_env.fake.events = [event(NOW - (k + 1) * HOUR) for k in range(4)]
    sync_env.fake.events_hidden = 1  # counted, never shown: page 3 carries the count alone
    outcome = maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    assert outcome.summary is not None and outcome.summary["added"] == 4
    assert len(sync_env.fake.events_requests()) == 3
    assert sync_env.fake.export_requests() == []


@pytest.mark.parametrize("style", ["{}", "count", "full"])
def test_an_empty_window_creates_an_empty_store(sync_env: SyncEnv, style: Any) -> None:
    sync_env.fake.events, sync_env.fake.events_empty = [], style
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert outcome.summary is not None and outcome.summary["empty"] is True
    assert store_doc()["events"] == []
    assert len(sync_env.fake.events_requests()) == 1 and sync_env.fake.export_requests() == []
    assert load_state().source == "json"


def _seed(env: SyncEnv) -> bytes:
    env.fake.events = [event(NOW - 3 * HOUR), event(NOW - 2 * HOUR, inp=7)]
    assert maybe_sync(env.db_path, now_ms=NOW).changed
    env.fake.events.append(event(NOW - HOUR, inp=9))
    env.fake.rows = [csv_row(NOW - HOUR, cost="$9.99")]
    return store_path().read_bytes()


@dataclass(frozen=True)
class Failure:
    mode: EventsMode
    code: str
    words: str


FAILURES = {
    "count-changes": Failure("count-changes", "export", "changed while they were read"),
    "too-large": Failure("too-large", "export", "more usage events than asked for"),
    "401": Failure("401", "login", "HTTP 401"),
    "403": Failure("403", "login", "HTTP 403"),
    "429": Failure("429", "network", "HTTP 429"),
    "500": Failure("500", "network", "HTTP 500"),
    "503": Failure("503", "network", "HTTP 503"),
    "truncated": Failure("truncated", "network", "cursor.com"),
    "stall": Failure("stall", "network", "did not answer within"),
}


@pytest.mark.parametrize("name", list(FAILURES))
def test_a_failed_json_sync_keeps_the_store_and_never_falls_back(
    sync_env: SyncEnv, small_pages: int, name: str
) -> None:
    case = FAILURES[name]
    before = _seed(sync_env)
    mtime = store_path().stat().st_mtime_ns
    sync_env.fake.events_mode = case.mode
    budget = 0.5 if case.mode == "stall" else 15.0

    outcome = maybe_sync(sync_env.db_path, now_ms=NOW + PAST_THROTTLE, budget_s=budget)
    assert (outcome.attempted, outcome.changed, outcome.error_code) == (True, False, case.code)
    with pytest.raises(SyncError) as caught:
        maybe_sync(sync_env.db_path, force=True, now_ms=NOW + PAST_THROTTLE + 1, budget_s=budget)

    message = str(caught.value)
    assert case.words in message and "\n" not in message and "SECRET" not in message
    assert sync_env.fake.export_requests() == []  # no CSV fallback for a failed sync
    assert store_path().read_bytes() == before and store_path().stat().st_mtime_ns == mtime
    state = load_state()
    assert (state.error_code, state.failures, state.source) == (case.code, 2, "json")


@pytest.mark.parametrize(
    "mode", ["404", "405", "garbage", "html", "unknown-schema", "204", "bad-event"]
)
def test_no_json_events_or_an_unknown_shape_falls_back_to_the_export_once(
    sync_env: SyncEnv, mode: str
) -> None:
    before = _seed(sync_env)
    if mode == "bad-event":
        sync_env.fake.events.append(
            {**event(NOW - 30 * 60_000), "tokenUsage": {"inputTokens": "12a"}}
        )
    else:
        sync_env.fake.events_mode = mode  # type: ignore[assignment]

    outcome = maybe_sync(sync_env.db_path, force=True, now_ms=NOW + PAST_THROTTLE)

    assert outcome.changed and outcome.error_code is None
    assert len(sync_env.fake.events_requests()) == 2  # the seeding sync's and this one's
    assert len(sync_env.fake.export_requests()) == 1
    assert store_path().read_bytes() != before
    costs = {e["cost"] for e in store_doc()["events"]}
    assert "$9.99" in costs
    assert load_state().source == "csv"


def test_a_failing_fallback_keeps_the_store(sync_env: SyncEnv) -> None:
    before = _seed(sync_env)
    sync_env.fake.events_mode, sync_env.fake.mode = "html", "not-csv"
    with pytest.raises(SyncError, match="usage export"):
        maybe_sync(sync_env.db_path, force=True, now_ms=NOW + PAST_THROTTLE)
    assert len(sync_env.fake.export_requests()) == 1
    assert store_path().read_bytes() == before


def test_kinds_are_the_exports_billing_classes(sync_env: SyncEnv) -> None:
    at = [NOW - (k + 1) * HOUR for k in range(6)]
    sync_env.fake.events = [
        event(at[0], kind="USAGE_EVENT_KIND_USAGE_BASED", charged=204.688495, fee=39.0061),
        event(at[1], kind="USAGE_EVENT_KIND_INCLUDED_IN_PRO_PLUS", charged=50.0),
        event(at[2], kind="USAGE_EVENT_KIND_FREE_CREDIT"),
        event(at[3], kind="USAGE_EVENT_KIND_ERRORED_NOT_CHARGED", charged=12.0),
        event(at[4], kind="USAGE_EVENT_KIND_ABORTED_NOT_CHARGED"),
        event(at[5], kind="USAGE_EVENT_KIND_USER_API_KEY"),
    ]
    maybe_sync(sync_env.db_path, now_ms=NOW)

    calls = {c.timestamp_ms: c for c in events_as_calls(load())}
    list_price, priced = pricing.cost_of("claude-4.5-sonnet", 100, 50, 0, 1000)
    assert priced and list_price > 0
    billed = calls[at[0]]
    assert (billed.cost, billed.billed, billed.estimated) == (
        pytest.approx(2.04688495),
        True,
        False,
    )
    for k in (1, 2):
        assert (calls[at[k]].cost, calls[at[k]].billed) == (pytest.approx(list_price), False)
        assert calls[at[k]].estimated is False
    for k in (3, 4):
        assert (calls[at[k]].cost, calls[at[k]].not_charged) == (0.0, True)
    assert calls[at[5]].provider == "user-api-key"
    fee = next(e for e in load().events if e.row.timestamp_ms == at[0]).detail
    assert fee is not None and fee.cursor_fee == pytest.approx(0.390061)


def test_a_team_account_keeps_the_signed_in_users_events(sync_env: SyncEnv) -> None:
    sync_env.fake.events = [
        event(NOW - 3 * HOUR, inp=1, owner="user_sync_test"),
        event(NOW - 2 * HOUR, inp=2, owner="user_someone_else"),
        event(NOW - 1 * HOUR, inp=3, owner="user_sync_test"),
    ]
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert outcome.summary is not None and outcome.summary["added"] == 2
    assert sorted(e["input"] for e in store_doc()["events"]) == [1, 3]
    assert "owningUser" not in store_path().read_text()


def test_a_team_account_without_the_signed_in_user_stores_nothing(sync_env: SyncEnv) -> None:
    sync_env.fake.events = [
        event(NOW - 2 * HOUR, owner="user_a"),
        event(NOW - 1 * HOUR, owner="user_b"),
    ]
    with pytest.raises(SyncError, match="several people"):
        maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    assert not store_path().exists() and sync_env.fake.export_requests() == []


# --- one event, whichever way it came ------------------------------------------------------------


def _events_and_export(tmp_path: Path) -> tuple[list[dict[str, Any]], Path]:
    # The JSON-only event is on the day before the export's: outside its (manual) coverage,
    # where a sync may add what the export lacks.
    at = [NOW - 5 * HOUR, NOW - 4 * HOUR, NOW - 30 * HOUR]
    events = [
        event(at[0], kind="USAGE_EVENT_KIND_USAGE_BASED", charged=204.688495, fee=39.0061),
        event(at[1], conversation="conv-2"),
        event(at[2], "gpt-5", conversation="conv-json-only"),
    ]
    rows = [
        csv_row(at[0], cost="$1.66", kind="Usage-based"),
        csv_row(at[1]),
        csv_row(at[1] - HOUR, cost="0.19"),  # in the export only
    ]
    return events, write_export(tmp_path / "usage.csv", rows, mtime_ms=NOW - 60_000)


def test_json_then_csv_and_csv_then_json_give_the_same_store(
    sync_env: SyncEnv, tmp_path: Path
) -> None:
    events, export = _events_and_export(tmp_path)
    sync_env.fake.events = events

    maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    import_file(export)
    json_first = store_path().read_bytes()
    store_path().unlink()
    state_path().unlink()  # a fresh machine: the same first window
    import_file(export)
    maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    csv_first = store_path().read_bytes()

    assert csv_first == json_first
    doc = json.loads(csv_first)
    assert len(doc["events"]) == 4
    by_conv = {(e["usageEvent"] or {}).get("conversationId"): e for e in doc["events"]}
    assert set(by_conv) == {"conv-1", "conv-2", "conv-json-only", None}
    assert by_conv["conv-1"]["cost"] == "$1.66" and by_conv["conv-1"]["cells"] == "csv"
    assert by_conv["conv-json-only"]["cells"] == "json"
    assert by_conv["conv-json-only"]["source"] == "sync"
    assert by_conv["conv-2"]["source"] == "import"
    billed = {c.timestamp_ms: c.cost for c in events_as_calls(load())}
    assert billed[NOW - 5 * HOUR] == pytest.approx(2.04688495)  # chargedCents, fee included


def test_the_json_detail_survives_later_exports(sync_env: SyncEnv, tmp_path: Path) -> None:
    events, export = _events_and_export(tmp_path)
    sync_env.fake.events = events
    maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    sync_env.fake.events = None  # the JSON endpoint is gone: the next syncs read the export
    sync_env.fake.rows = [  # the export of the same window: the same three events
        csv_row(NOW - 5 * HOUR, cost="$1.66", kind="Usage-based"),
        csv_row(NOW - 4 * HOUR),
        ExportRow(iso_utc(NOW - 30 * HOUR), "gpt-5", input=100, output=50, cache_read=1000),
    ]
    maybe_sync(sync_env.db_path, force=True, now_ms=NOW + 1)
    import_file(export)
    assert load_state().source == "csv"

    conversations = {
        e.row.timestamp_ms: e.detail.conversation_id for e in load().events if e.detail
    }
    assert conversations == {
        NOW - 5 * HOUR: "conv-1",
        NOW - 4 * HOUR: "conv-2",
        NOW - 30 * HOUR: "conv-json-only",
    }


def test_a_conversation_id_beyond_256_characters_is_not_kept(sync_env: SyncEnv) -> None:
    sync_env.fake.events = [
        event(NOW - 2 * HOUR, conversation="c" * 256),
        event(NOW - HOUR, conversation="x" * (1024 * 1024)),  # 1 MiB: garbage, not an id
    ]
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert outcome.summary is not None and outcome.summary["added"] == 2  # the events are kept
    ids = {e.row.timestamp_ms: e.detail.conversation_id for e in load().events if e.detail}
    assert ids == {NOW - 2 * HOUR: "c" * 256, NOW - HOUR: ""}
    assert store_path().stat().st_size < 10_000


def test_report_totals_carry_cursors_token_fee(
    sync_env: SyncEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cursorFee` (docs/cursor-sync.md): the usage-based events' token fee, part of
    `billedCost`, in every totals object of the report, sealed days included."""
    sync_env.fake.events = [
        event(NOW - 2 * HOUR, kind="USAGE_EVENT_KIND_USAGE_BASED", charged=204.688495, fee=39.0061),
        event(NOW - 26 * HOUR, "gpt-5", kind="USAGE_EVENT_KIND_USAGE_BASED", charged=50.0, fee=7.5),
        event(NOW - 3 * HOUR, kind="USAGE_EVENT_KIND_INCLUDED_IN_PRO", fee=99.0),  # not billed
    ]
    maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    argv = ["report", "--period", "week", "--format", "json", "--no-sync"]
    for _ in range(2):  # the second from the days sealed by the first
        assert main(argv) == 0
        report = json.loads(capsys.readouterr().out)
        totals = report["totals"]
        assert totals["cursorFee"] == pytest.approx(0.465061)
        assert totals["billedCost"] == pytest.approx(2.54688495)  # the fee is part of it
        by_model = {m["model"]: m["cursorFee"] for m in report["models"]}
        assert by_model == {"claude-4.5-sonnet": pytest.approx(0.390061), "gpt-5": 0.075}
        assert sum(d["cursorFee"] for d in report["days"]) == pytest.approx(0.465061)
    sealed = json.loads(daily_path(sync_env.cache_dir).read_text())["days"]
    assert any(day["cursor"]["totals"][-1] == pytest.approx(0.075) for day in sealed.values())
