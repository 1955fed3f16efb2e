"""Fixtures for the sync tests: private cache/config dirs, Cursor's login, a fake cursor.com."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import time_machine

from tests.sync.fake_cursor import FIXED_NOW_MS, FakeCursor, SyncEnv, setup_sync_env

# A zone far from UTC (and with DST) so that local midnight is never UTC midnight.
TEST_TZ = "Pacific/Auckland"


@pytest.fixture
def local_tz() -> Iterator[str]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = TEST_TZ
    time.tzset()
    yield TEST_TZ
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.fixture
def fixed_clock() -> Iterator[int]:
    """FIXED_NOW_MS for everything in the test, the login token's expiry (a week after the
    clock when `sync_env` builds it) included; request it before `sync_env`."""
    with time_machine.travel(FIXED_NOW_MS / 1000, tick=False):
        yield FIXED_NOW_MS


@pytest.fixture
def fake_cursor() -> Iterator[FakeCursor]:
    with FakeCursor() as fake:
        yield fake


@pytest.fixture
def sync_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_cursor: FakeCursor, local_tz: str
) -> SyncEnv:
    return setup_sync_env(tmp_path, monkeypatch, fake_cursor)
