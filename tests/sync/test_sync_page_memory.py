"""What one page of JSON usage events may cost (docs/cursor-sync.md, "What a page may cost"): it is
refused by size before it is parsed, gzip is inflated here and counted against the limit as it
comes, and a failed page leaves the store byte-identical."""

from __future__ import annotations

import json
import tracemalloc
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


def _seed(env: SyncEnv) -> bytes:
    env.fake.events = [event(NOW - 2 * HOUR), event(NOW - HOUR, inp=7)]
    assert maybe_sync(env.db_path, now_ms=NOW).changed
    return store_path().read_bytes()


def _refused_within(env: SyncEnv, before: bytes, words: str, peak_mb: int) -> None:
    """A forced sync fails with `words`, allocating at most `peak_mb` MB on the way."""
    tracemalloc.start()
    try:
        with pytest.raises(SyncError, match=words):
            maybe_sync(env.db_path, force=True, now_ms=LATER)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < peak_mb * MB, f"peak {peak / MB:.1f} MB"
    assert store_path().read_bytes() == before
    assert env.fake.export_requests() == []  # a failed page never falls back to the CSV
    assert load_state().error_code == "export"


def test_a_gzip_bomb_is_refused_within_the_page_limit(sync_env: SyncEnv) -> None:
    before = _seed(sync_env)
    body = _gzip(b'{"totalUsageEventsCount": 1, "usageEventsDisplay": [', b" ", 300, b"]}")
    assert len(body) < 2 * MB  # 300 MB once inflated
    sync_env.fake.events_body = body
    sync_env.fake.events_headers = {"Content-Encoding": "gzip"}
    _refused_within(sync_env, before, "too large", peak_mb=3 * client.MAX_EVENTS_PAGE_BYTES // MB)


def test_a_page_declared_larger_than_the_limit_is_refused_unread(sync_env: SyncEnv) -> None:
    before = _seed(sync_env)
    items = b",".join([b"{}"] * (5 * MB))  # 10 MB of empty events
    sync_env.fake.events_body = b'{"totalUsageEventsCount":1,"usageEventsDisplay":[' + items + b"]}"
    _refused_within(sync_env, before, "too large", peak_mb=4)


def test_a_page_of_more_objects_than_its_events_can_hold_is_refused_unparsed(
    sync_env: SyncEnv,
) -> None:
    before = _seed(sync_env)
    count = (client.EVENTS_PAGE_SIZE + 1) * client.MAX_OBJECTS_PER_EVENT + 1
    items = b",".join([b"{}"] * count)  # ~200 KB: under the byte limit
    sync_env.fake.events_body = b'{"totalUsageEventsCount":1,"usageEventsDisplay":[' + items + b"]}"
    _refused_within(sync_env, before, "too large", peak_mb=4)


def test_an_unknown_encoding_is_refused(sync_env: SyncEnv) -> None:
    before = _seed(sync_env)
    sync_env.fake.events_body = b"\x8b\x00not brotli really"
    sync_env.fake.events_headers = {"Content-Encoding": "br"}
    _refused_within(sync_env, before, "encoding we do not read", peak_mb=4)


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
