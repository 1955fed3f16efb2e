"""What one page of JSON usage events may cost (docs/cursor-sync.md, "What a page may cost"): it is
refused by size before it is parsed, gzip is inflated here and counted against the limit as it
comes, and a failed page leaves the store byte-identical. The peak of the heap while refusing
one is measured by bench/page_memory.py."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable

import pytest

from codeburn.cache.imports.store import store_path
from codeburn.sync import client
from codeburn.sync.cursor_sync import SyncError, maybe_sync
from codeburn.sync.state import load_state
from tests.sync.fake_cursor import FIXED_NOW_MS, SyncEnv
from tests.sync.test_sync_json import event

HOUR = 3_600_000
NOW = FIXED_NOW_MS
LATER = NOW + HOUR + 5 * 60_000 + 1
MB = 1024 * 1024
# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = [pytest.mark.usefixtures("fixed_clock"), pytest.mark.any_moment]


def _gzip(head: bytes, filler: bytes, megabytes: int, tail: bytes) -> bytes:
    """gzip of head + filler × (megabytes MB) + tail, made a megabyte at a time."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    block = filler * (MB // len(filler))
    parts = [packer.compress(head)]
    parts += [packer.compress(block) for _ in range(megabytes)]
    parts += [packer.compress(tail), packer.flush()]
    return b"".join(parts)


def seed(env: SyncEnv) -> bytes:
    """A store of two events; returns its bytes (a refused page must leave them as they are)."""
    env.fake.events = [event(NOW - 2 * HOUR), event(NOW - HOUR, inp=7)]
    assert maybe_sync(env.db_path, now_ms=NOW).changed
    return store_path().read_bytes()


Page = tuple[bytes, dict[str, str]]  # the body cursor.com sends, and its headers


def gzip_bomb() -> Page:
    body = _gzip(b'{"totalUsageEventsCount": 1, "usageEventsDisplay": [', b" ", 300, b"]}")
    assert len(body) < 2 * MB  # 300 MB once inflated
    return body, {"Content-Encoding": "gzip"}


def declared_too_large() -> Page:
    items = b",".join([b"{}"] * (5 * MB))  # 10 MB of empty events
    return b'{"totalUsageEventsCount":1,"usageEventsDisplay":[' + items + b"]}", {}


def too_many_objects() -> Page:
    count = (client.EVENTS_PAGE_SIZE + 1) * client.MAX_OBJECTS_PER_EVENT + 1
    items = b",".join([b"{}"] * count)  # ~200 KB: under the byte limit
    return b'{"totalUsageEventsCount":1,"usageEventsDisplay":[' + items + b"]}", {}


def unknown_encoding() -> Page:
    return b"\x8b\x00not brotli really", {"Content-Encoding": "br"}


# What a refused page may cost: name → (the page, the refusal's words, the peak of the Python
# heap in MB while refusing it). The peaks are measured by bench/page_memory.py, not here.
REFUSED: dict[str, tuple[Callable[[], Page], str, int]] = {
    "gzip-bomb": (gzip_bomb, "too large", 3 * client.MAX_EVENTS_PAGE_BYTES // MB),
    "declared-too-large": (declared_too_large, "too large", 4),
    "too-many-objects": (too_many_objects, "too large", 4),
    "unknown-encoding": (unknown_encoding, "encoding we do not read", 4),
}


def serve(env: SyncEnv, name: str) -> None:
    """The fake cursor.com answers the next page of events with the page `name`."""
    env.fake.events_body, env.fake.events_headers = REFUSED[name][0]()


def refuse(env: SyncEnv, name: str) -> None:
    """A forced sync fails with the words of the page `name` served."""
    with pytest.raises(SyncError, match=REFUSED[name][1]):
        maybe_sync(env.db_path, force=True, now_ms=LATER)


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_page_beyond_what_it_may_cost_is_refused_and_changes_nothing(
    sync_env: SyncEnv, name: str
) -> None:
    """A gzip bomb, a page too large, one of more objects than its events can hold, and an
    encoding we do not read: each refused before it is parsed, the store byte-identical."""
    before = seed(sync_env)
    serve(sync_env, name)
    refuse(sync_env, name)
    assert store_path().read_bytes() == before
    assert sync_env.fake.export_requests() == []  # a failed page never falls back to the CSV
    assert load_state().error_code == "export"


@pytest.mark.parametrize("cut", [lambda b: b, lambda b: b[: len(b) // 2]])
def test_a_gzip_page_is_read(sync_env: SyncEnv, cut: Callable[[bytes], bytes]) -> None:
    events = [event(NOW - 3 * HOUR), event(NOW - HOUR, inp=9, conversation="conv-gz")]
    doc = json.dumps({"totalUsageEventsCount": 2, "usageEventsDisplay": events}).encode()
    whole = zlib.compressobj(6, zlib.DEFLATED, 31)
    body = whole.compress(doc) + whole.flush()
    sync_env.fake.events = events
    sync_env.fake.events_body = cut(body)
    sync_env.fake.events_headers = {"Content-Encoding": "gzip"}
    request_headers = sync_env.fake.requests
    if cut(body) == body:
        outcome = maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
        assert outcome.summary is not None and outcome.summary["added"] == 2
        assert request_headers[0].headers["accept-encoding"] == "gzip"
    else:
        with pytest.raises(SyncError, match="cut short"):
            maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
        assert not store_path().exists()
