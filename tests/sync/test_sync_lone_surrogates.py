"""Text cursor.com sends that UTF-8 cannot encode (a lone surrogate such as "\\ud800") is replaced
where it enters, so the JSON of every later report and status still prints (docs/cursor-sync.md,
"Reading an event"). End to end: the `codeburn` process, a loopback cursor.com, a UTF-8 stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.imports.store import store_path
from codeburn.providers.localtime import now_ms
from tests.sync.fake_cursor import SyncEnv
from tests.sync.test_sync_json import event

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


HOUR = 3_600_000
BAD = "\ufffd"  # what a lone surrogate becomes


def _codeburn(*argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONUTF8": "1"}
    return subprocess.run(
        [sys.executable, "-m", "codeburn.server.cli", *argv],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )


def _json(*argv: str) -> Any:
    done = _codeburn(*argv, "--format", "json")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr
    return json.loads(done.stdout.decode("utf-8"))  # strict: the bytes are UTF-8


def test_lone_surrogates_from_the_json_sync_never_break_the_json_output(
    sync_env: SyncEnv, tmp_path: Path
) -> None:
    now = now_ms()
    sync_env.fake.events = [
        event(now - 2 * HOUR, "gpt-\ud800", conversation="conv-ok"),
        event(now - HOUR, "gpt-5", conversation="conv-\udc00-x"),
        event(now - 3 * HOUR, "claude-4.5-sonnet", conversation="conv-\U0001f600"),  # a real pair
    ]
    db = ["--cursor-db", str(sync_env.db_path)]
    summary = _json("import", "cursor", "--sync")
    assert summary["added"] == 3

    raw = store_path().read_text(encoding="utf-8")
    stored = json.loads(raw)
    assert not any("\ud800" <= ch <= "\udfff" for ch in json.dumps(stored, ensure_ascii=False))
    models = {e["model"] for e in stored["events"]}
    assert f"gpt-{BAD}" in models
    conversations = {e["usageEvent"]["conversationId"] for e in stored["events"]}
    assert conversations == {"conv-ok", f"conv-{BAD}-x", "conv-\U0001f600"}

    report = _json("report", "--period", "30days", "--no-sync", *db)
    assert f"gpt-{BAD}" in {m["model"] for m in report["models"]}
    assert report["totals"]["calls"] == 3
    status = _json("status", "--no-sync", *db)
    assert status["state"] in ("ok", "no-data")
    by_conversation = _json(
        "report", "--by", "conversation", "--period", "30days", "--no-sync", *db
    )
    assert by_conversation["totals"]["calls"] == 3


def test_a_store_written_before_the_fix_is_read_clean(sync_env: SyncEnv) -> None:
    now = now_ms()
    sync_env.fake.events = [event(now - HOUR, "gpt-5", conversation="conv-plain")]
    assert _codeburn("import", "cursor", "--sync").returncode == 0
    # What an older CodeBurn wrote for such an event: the surrogate as a JSON escape.
    text = store_path().read_text(encoding="utf-8")
    assert text.count('"gpt-5"') == 1 and text.count('"conv-plain"') == 1
    store_path().write_text(
        text.replace('"gpt-5"', '"gpt-\\ud800"').replace('"conv-plain"', '"c\\udc00"'),
        encoding="utf-8",
    )
    db = ["--cursor-db", str(sync_env.db_path)]
    report = _json("report", "--period", "30days", "--no-sync", *db)
    assert f"gpt-{BAD}" in {m["model"] for m in report["models"]}
    _json("report", "--by", "conversation", "--period", "30days", "--no-sync", *db)
    _json("status", "--no-sync", *db)


@pytest.mark.parametrize("cell", [b"gpt-\xed\xa0\x80", b"gpt-\xff"])
def test_a_csv_that_is_not_utf8_is_refused_in_one_line(
    sync_env: SyncEnv, tmp_path: Path, cell: bytes
) -> None:
    export = tmp_path / "usage.csv"
    export.write_bytes(
        b"Date,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,"
        b"Output Tokens,Total Tokens,Cost\n"
        b'"2026-11-17T10:00:00.000Z","Included",' + cell + b',"No",0,100,0,50,150,"Included"\n'
    )
    done = _codeburn("import", "cursor", str(export))
    assert done.returncode == 1 and done.stderr.count(b"\n") == 1
    assert b"not UTF-8" in done.stderr
    assert not store_path().exists()
