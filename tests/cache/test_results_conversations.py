"""The local conversations in the results cache: every id, made into objects when looked up."""

from __future__ import annotations

from typing import Any

import pytest

from codeburn.cache.results_cache import CachedResults, StoredConversations, results_object
from codeburn.providers.conversations import LocalConversation

CONV = LocalConversation(
    "c1", "-home-me-a", "cursor-agent", "Add tests", ("gpt-5",), ((1_000, 4_000, "gpt-5"),), 1, 9
)


def _doc(conversations: Any) -> dict[str, Any]:
    cached = CachedResults("/db", "fp", 0, [], [], {}, conversations={"c1": CONV})
    doc: dict[str, Any] = results_object(cached.dumps().encode())
    doc["conversations"] = conversations if conversations is not None else doc["conversations"]
    return doc


def test_conversations_round_trip_and_write_back() -> None:
    loaded = CachedResults.load(_doc(None))
    assert loaded is not None and isinstance(loaded.conversations, StoredConversations)
    assert dict(loaded.conversations) == {"c1": CONV} and "c2" not in loaded.conversations
    assert results_object(loaded.dumps().encode())["conversations"] == [CONV.to_row()]


@pytest.mark.parametrize(
    "bad", [{"c1": 1}, [["c1"]], [[1, "p", "cursor", None, [], [], 0, 0]], [CONV.to_row()[:5]]]
)
def test_a_corrupt_list_is_a_miss(bad: Any) -> None:
    assert CachedResults.load(_doc(bad)) is None
