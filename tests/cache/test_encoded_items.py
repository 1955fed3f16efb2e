"""The encoded-items memo of cache files: its text is always what encoding everything gives."""

from __future__ import annotations

import json
import random
from typing import Any

from codeburn.cache.files import EncodedItems


def _plain(items: list[Any]) -> str:
    return ",".join(json.dumps(i, separators=(",", ":")) for i in items)


def test_joined_equals_encoding_everything_through_appends_inserts_and_removals() -> None:
    rng = random.Random(7)
    memo = EncodedItems()
    items: list[Any] = [{"n": n, "text": "x" * (n % 9)} for n in range(3_000)]
    for step in range(40):
        assert memo.joined(items) == _plain(items)
        kind = step % 4
        at = rng.randrange(len(items))
        if kind == 0:
            items.append({"n": 10_000 + step})
        elif kind == 1:
            items.insert(at, [step, "inserted"])
        elif kind == 2:
            del items[at : at + rng.randrange(1, 90)]
        else:
            items[at] = {"n": at, "replaced": step}  # a new object at the same place
    assert memo.joined([]) == ""
    assert memo.joined(items[:1]) == _plain(items[:1])


def test_joined_reuses_the_texts_of_unchanged_items() -> None:
    encoded: list[Any] = []

    def encode(item: Any) -> Any:
        encoded.append(item)
        return item

    memo = EncodedItems(encode)
    items: list[Any] = [[n] for n in range(2_000)]
    memo.joined(items)
    assert len(encoded) == 2_000
    encoded.clear()
    items.insert(1_000, ["new"])
    assert memo.joined(items) == _plain(items)
    assert ["new"] in encoded and len(encoded) < 400  # the new item's run, not everything
