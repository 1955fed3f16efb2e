"""The report's conversations (top 50 by cost, then id) and days, from day slices: the same
rows as merging every conversation and every day in full would give, and the slices are left
as they were."""

from __future__ import annotations

import copy
from datetime import date, timedelta
from typing import Any

from codeburn.cache import DaySlices, GroupSums, Slice, merge_days
from codeburn.providers import iso_utc
from codeburn.server.service.periods import Period
from codeburn.server.service.report import (
    ALL_PROVIDERS,
    TOP_CONVERSATIONS,
    build_report,
    conversation_rows,
)

DAY0 = date(2026, 3, 2)
MS0 = 1_772_000_000_000


def _days() -> dict[date, DaySlices]:
    """70 conversations over 3 days and 2 providers, with cost ties and one conversation
    under both providers."""
    days: dict[date, DaySlices] = {}
    for n in range(70):
        day = DAY0 + timedelta(days=n % 3)
        provider = "cursor-agent" if n % 5 == 0 else "cursor"
        cost = float(n % 9) * 0.1 + 0.01 * (n % 2)  # many equal costs: the id decides
        sums = GroupSums(cost, 2, 10 * n, n, 0, 0, 0, MS0 + n * 1000, MS0 + n * 2000)
        for cid, part_provider in ((f"c{n:02d}", provider), ("shared", "cursor-agent")):
            part = days.setdefault(day, {}).setdefault(part_provider, Slice())
            head = (f"title {n}" if n % 4 else None, "proj", part_provider)
            part.add_group(part_provider, "gpt-5", "proj", cid, True, False, True, sums, local=True)
            part.add_conversation(cid, head, f"model-{n % 3}", (True, False), sums)
    days[DAY0 + timedelta(days=5)] = {"cursor": Slice()}  # a day without calls: no row
    return days


def _reference_rows(merged: DaySlices) -> list[dict[str, Any]]:
    """Every conversation merged and made a row, then sorted and cut (the former way)."""
    convs: dict[str, Any] = {}
    for part in merged.values():
        for cid, conv in part.conversation_sums().items():
            if cid in convs:
                convs[cid].merge(conv)
            else:
                convs[cid] = conv.copy()
    rows = [
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
        for cid, c in convs.items()
        if c.totals.calls
    ]
    rows.sort(key=lambda r: (-r["cost"], r["id"]))
    return rows[:TOP_CONVERSATIONS]


def test_conversation_rows_are_the_top_of_every_conversation_merged() -> None:
    merged = merge_days(_days().values(), ALL_PROVIDERS)
    before = copy.deepcopy(merged)
    rows = conversation_rows(merged)
    assert rows == _reference_rows(before)
    assert len(rows) == TOP_CONVERSATIONS
    assert rows[0]["id"] == "shared"  # the conversation of both providers: merged
    assert merged == before  # nothing merged into the slices' own sums


def test_each_days_totals_are_those_of_that_day_merged_alone() -> None:
    days = _days()
    period = Period("all", DAY0, DAY0 + timedelta(days=9))
    report = build_report(
        days, period, provider="all", timezone="UTC", snapshot=None, cursor_sync=None,
        warnings=[],
    )  # fmt: skip
    want = []
    for d, slices in sorted(days.items()):
        one = merge_days([slices], ALL_PROVIDERS, conversations=False)
        total = Slice().totals
        for part in one.values():
            total.merge(part.totals)
        if total.calls:
            want.append({"date": d.isoformat(), **total.to_json()})
    assert report["days"] == want
    assert [r["date"] for r in want] == [(DAY0 + timedelta(days=i)).isoformat() for i in range(3)]
