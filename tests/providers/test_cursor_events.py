"""Cursor's JSON usage events read as export rows: identity, optional fields, strings as numbers."""

from __future__ import annotations

from typing import Any

import pytest

from codeburn.providers.exports.usage_csv import parse_csv, row_to_call
from codeburn.providers.exports.usage_events import (
    EventShapeError,
    billing_class,
    one_persons_events,
    parse_event,
    parse_events,
)
from codeburn.providers.localtime import iso_utc
from tests.csv_fixtures import ExportRow, export_bytes

MS = 1_795_000_000_123


def test_an_event_and_its_export_row_have_one_identity() -> None:
    event = parse_event(
        {
            "timestamp": str(MS),
            "model": "claude-4.5-sonnet",
            "tokenUsage": {
                "inputTokens": "120",
                "outputTokens": 40,
                "cacheWriteTokens": 7.0,
                "cacheReadTokens": "9000",
            },
        }
    )
    [row] = parse_csv(
        export_bytes(
            [
                ExportRow(
                    iso_utc(MS), "claude-4.5-sonnet", cache_write=7, input=120, cache_read=9000,
                    output=40,
                )
            ]
        )
    )  # fmt: skip
    assert event.row.hash == row.hash
    assert (event.row.tokens, event.row.total) == (row.tokens, 9167)


def test_every_field_is_optional_but_the_time() -> None:
    event = parse_event({"timestamp": MS})
    assert (event.row.model, event.row.tokens, event.row.kind) == ("unknown", 0, "")
    assert event.detail.conversation_id == "" and event.detail.charged_cents is None
    with pytest.raises(EventShapeError):
        parse_event({"model": "gpt-5"})


@pytest.mark.parametrize(
    "bad",
    [
        {"timestamp": "yesterday"},
        {"timestamp": MS, "tokenUsage": {"inputTokens": "12a"}},
        {"timestamp": MS, "tokenUsage": {"inputTokens": -3}},
        {"timestamp": MS, "tokenUsage": {"outputTokens": 1.5}},
        {"timestamp": MS, "tokenUsage": {"cacheReadTokens": 10**13}},
        {"timestamp": MS, "tokenUsage": []},
        {"timestamp": MS, "chargedCents": "lots"},
        {"timestamp": MS, "chargedCents": float("nan")},
        {"timestamp": MS, "conversationId": 12},
        {"timestamp": MS, "maxMode": 3},
        "not an object",
    ],
)
def test_a_present_but_unreadable_value_is_refused(bad: Any) -> None:
    with pytest.raises(EventShapeError):
        parse_event(bad)


def test_a_usage_based_event_is_billed_its_charge_fee_included() -> None:
    event = parse_event(
        {
            "timestamp": MS,
            "model": "claude-4.5-sonnet",
            "kind": "USAGE_EVENT_KIND_USAGE_BASED",
            "chargedCents": "204.688495",
            "cursorTokenFee": 39.0061,
            "usageBasedCosts": "$1.66",
            "tokenUsage": {"totalCents": 165.682395},
        }
    )
    call = row_to_call(event.row, event.detail)
    assert call.cost == pytest.approx(2.04688495) and call.billed
    assert event.detail.cursor_fee == pytest.approx(0.390061)
    # No chargedCents: the token cost and the fee, else the dashboard's Cost.
    parts = parse_event(
        {
            "timestamp": MS,
            "kind": "USAGE_EVENT_KIND_USAGE_BASED",
            "cursorTokenFee": "39.0061",
            "tokenUsage": {"totalCents": "165.682395"},
        }
    )
    assert parts.detail.billed_dollars == pytest.approx(2.04688495)
    shown = parse_event(
        {"timestamp": MS, "kind": "USAGE_EVENT_KIND_USAGE_BASED", "usageBasedCosts": "$1.66"}
    )
    assert shown.detail.billed_dollars == pytest.approx(1.66)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("USAGE_EVENT_KIND_INCLUDED_IN_PRO", "included"),
        ("USAGE_EVENT_KIND_INCLUDED_IN_ULTRA", "included"),
        ("USAGE_EVENT_KIND_INCLUDED_IN_BUSINESS", "included"),
        ("USAGE_EVENT_KIND_FREE_CREDIT", "included"),
        ("USAGE_EVENT_KIND_USAGE_BASED", "billed"),
        ("USAGE_EVENT_KIND_ERRORED_NOT_CHARGED", "not-charged"),
        ("USAGE_EVENT_KIND_ABORTED_NOT_CHARGED", "not-charged"),
        ("USAGE_EVENT_KIND_USER_API_KEY", "user-api-key"),
        ("USAGE_EVENT_KIND_CUSTOM_SUBSCRIPTION", None),
        ("", None),
    ],
)
def test_kinds_map_to_the_exports_classes(kind: str, expected: str | None) -> None:
    assert billing_class(kind) == expected


def test_identical_events_of_one_answer_are_numbered_like_export_rows() -> None:
    same = {"timestamp": MS, "model": "gpt-5", "tokenUsage": {"inputTokens": 5}}
    events = parse_events([same, same])
    rows = parse_csv(export_bytes([ExportRow(iso_utc(MS), "gpt-5", input=5)] * 2))
    assert [e.row.hash for e in events] == [r.hash for r in rows]
    assert len({e.row.hash for e in events}) == 2


def test_one_persons_events_by_user_id_or_email() -> None:
    events = parse_events(
        [
            {"timestamp": MS, "owningUser": "Ana@Example.com"},
            {"timestamp": MS + 1, "owningUser": 42},
            {"timestamp": MS + 2},
        ]
    )
    mine = one_persons_events(events, user_ids=["", "ana@example.com"])
    assert mine is not None and [e.row.timestamp_ms for e in mine] == [MS]
    assert one_persons_events(events, user_ids=["42"]) == [events[1]]
    assert one_persons_events(events, user_ids=["someone"]) is None
    assert one_persons_events(events[:1], user_ids=[]) == events[:1]
