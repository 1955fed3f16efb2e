"""A sync that is not due never loads the HTTP client (httpx costs a status ~50 ms to import)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from codeburn.sync.cursor_sync import maybe_sync
from tests.sync.fake_cursor import SyncEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from codeburn.sync.cursor_sync import maybe_sync
    outcome = maybe_sync(Path(sys.argv[1]))
    print(outcome.attempted, "httpx" in sys.modules)
    """
)


def _probe(env: SyncEnv) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(env.db_path)],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_no_client_when_the_sync_is_not_due(sync_env: SyncEnv) -> None:
    assert maybe_sync(sync_env.db_path).attempted  # the first sync: the next one is an hour away
    assert _probe(sync_env) == "False False"


def test_the_client_loads_when_a_sync_is_due(sync_env: SyncEnv) -> None:
    assert _probe(sync_env) == "True True"
