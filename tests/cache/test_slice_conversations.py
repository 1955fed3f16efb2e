"""Per-conversation sums in a day's slice: kept through the daily cache as they were derived."""

from __future__ import annotations

import json

import pytest

from codeburn.cache.usage_slices import GroupSums, Slice, merge_days


def _slice(cost: float, first: int, last: int, title: str | None = "Fix login") -> Slice:
    part = Slice()
    sums = GroupSums(cost, 2, 10, 20, 0, 0, 0, first, last)
    part.add_group("cursor", "gpt-5", "-home-me-a", "c1", False, True, True, sums, local=False)
    part.add_conversation("c1", (title, "-home-me-a", "cursor"), "gpt-5", (False, True), sums)
    part.add_attribution("byId", 2, cost)
    return part


def test_a_stored_slice_reads_back_and_is_written_back_unchanged() -> None:
    part = _slice(1.5, 1_000, 2_000)
    stored = json.loads(json.dumps(part.dump()))
    again = Slice.load(stored)
    assert again.dump() == stored  # not decoded: written back as stored
    conv = again.conversation_sums()["c1"]
    assert (conv.title, conv.project, conv.models, conv.first_ms, conv.last_ms) == (
        "Fix login", "-home-me-a", {"gpt-5"}, 1_000, 2_000,
    )  # fmt: skip
    assert conv.totals.billed_cost == 1.5 and conv.totals.sessions == {"c1"}
    assert again.dump() == stored  # decoded: the same JSON
    assert again.attribution == {"byId": [2, 1.5]}


def test_days_merge_their_conversations_unless_asked_not_to() -> None:
    day1 = Slice.load(json.loads(json.dumps(_slice(1.0, 1_000, 2_000).dump())))
    day2 = _slice(2.0, 5_000, 9_000, title=None)
    merged = merge_days([{"cursor": day1}, {"cursor": day2}])["cursor"]
    conv = merged.conversation_sums()["c1"]
    assert (conv.totals.cost, conv.totals.calls, conv.first_ms, conv.last_ms, conv.title) == (
        3.0, 4, 1_000, 9_000, "Fix login",
    )  # fmt: skip
    assert merged.attribution == {"byId": [4, 3.0]}
    bare = merge_days([{"cursor": day1}, {"cursor": day2}], conversations=False)["cursor"]
    assert bare.conversation_sums() == {} and bare.totals.cost == 3.0
    # The days merged are unchanged by it.
    assert day2.conversation_sums()["c1"].totals.cost == 2.0


@pytest.mark.parametrize("bad", [[1, 2], {"c1": [1, 2, 3]}, {"c1": "x"}])
def test_corrupt_conversation_sums_make_the_slice_a_miss(bad: object) -> None:
    stored = json.loads(json.dumps(_slice(1.0, 1, 2).dump()))
    stored["conversations"] = bad
    with pytest.raises(ValueError):
        Slice.load(stored)
