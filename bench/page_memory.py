"""Peak of the Python heap while a forced sync refuses a page (docs/cursor-sync.md, "What a page
may cost").

    python bench/page_memory.py

Against the suite's local fake cursor.com (tests/sync/fake_cursor.py, 127.0.0.1 only), a forced
sync meets each page of tests/sync/test_sync_page_memory.py `REFUSED` — a gzip bomb (300 MB once
inflated, under 2 MB sent), a page declaring 10 MB of events, one of more objects than its events
can hold, an encoding we do not read — and refuses it under `tracemalloc`. Target: each peak
under its ceiling there (three page limits for the bomb, 4 MB for the others). Prints one JSON
object (MB); exits 1 when a ceiling is missed. Moved here from the unit tests, where tracing
took ~2.5 s of every run; the tests keep the refusals.
"""

from __future__ import annotations

import json
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pytest
import time_machine

from tests.sync.fake_cursor import FIXED_NOW_MS, FakeCursor, setup_sync_env
from tests.sync.test_sync_page_memory import MB, REFUSED, refuse, seed, serve


def peak_mb(name: str) -> float:
    """The heap's peak, in MB, while a forced sync refuses the page `name`."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        pytest.MonkeyPatch.context() as monkeypatch,
        FakeCursor() as fake,
        time_machine.travel(FIXED_NOW_MS / 1000, tick=False),
    ):
        env = setup_sync_env(Path(tmp), monkeypatch, fake)
        seed(env)
        serve(env, name)  # the page is made before the tracing: only the refusal counts
        tracemalloc.start()
        try:
            refuse(env, name)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    return peak / MB


def main() -> int:
    results = {name: round(peak_mb(name), 2) for name in REFUSED}
    missed = {name: mb for name, mb in results.items() if mb >= REFUSED[name][2]}
    print(
        json.dumps({"peak_mb": results, "ceiling_mb": {n: c for n, (_, _, c) in REFUSED.items()}})
    )
    for name, mb in missed.items():
        print(f"{name}: peak {mb} MB, ceiling {REFUSED[name][2]} MB", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
