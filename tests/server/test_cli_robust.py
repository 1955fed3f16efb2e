"""Odd environments and inputs for the command line (issue 20): one line, never a traceback."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache import files
from codeburn.server.cli.main import main
from codeburn.sync.cursor_sync import maybe_sync
from tests.csv_fixtures import ExportRow, iso_local, write_export
from tests.sync.fake_cursor import FakeCursor, SyncEnv, make_jwt, setup_sync_env
from tests.usage_fixtures import days_ago, isolated_env, write_hand_profile

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SyncEnv]:
    with FakeCursor() as fake:
        yield setup_sync_env(tmp_path, monkeypatch, fake)


def _store_token(db: Path, value: str | bytes) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO ItemTable (key, value) VALUES ('cursorAuth/accessToken', ?)", (value,)
        )
    conn.close()


@pytest.mark.parametrize(
    "value",
    [
        make_jwt() + "é",  # a non-ASCII character in the signature
        make_jwt().replace(".", ".\u00a0", 1),  # … or a no-break space before the payload
        b"\xff\xfe" + make_jwt().encode(),  # a BLOB that is not UTF-8
    ],
    ids=["non-ascii", "nbsp", "non-utf8-blob"],
)
def test_unusable_login_token_is_the_login_message(
    env: SyncEnv, capsys: pytest.CaptureFixture[str], value: str | bytes
) -> None:
    _store_token(env.db_path, value)
    assert main(["import", "cursor", "--sync"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("codeburn import cursor: ") and err.count("\n") == 1, err
    assert "sign in" in err and "Traceback" not in err
    assert env.fake.requests == []  # nothing was sent with a header that cannot be sent


LONG_DB = "/tmp/" + "d" * 5000 + "/state.vscdb"


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--no-sync"],
        ["report", "--format", "json"],
        ["status"],
        ["import", "cursor", "--sync"],
        ["import", "cursor", "--remove"],
    ],
)
def test_overlong_cursor_db_is_one_line_naming_it(
    env: SyncEnv, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main([*argv, "--cursor-db", LONG_DB]) == 1
    err = capsys.readouterr().err
    command = " ".join(argv[:2] if argv[0] == "import" else argv[:1])
    assert err.startswith(f"codeburn {command}: ") and err.count("\n") == 1, err[:400]
    assert "/tmp/ddd" in err and "state.vscdb" in err and len(err) < 300, err[:400]
    assert "Traceback" not in err and "sync" not in err.split(":", 1)[1]
    assert env.fake.requests == []


def test_sync_off_reads_nothing_for_a_sync(env: SyncEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEBURN_CURSOR_SYNC", "0")
    outcome = maybe_sync(Path(LONG_DB))  # a path that cannot even be looked at
    assert outcome.attempted is False and outcome.error_code is None
    monkeypatch.delenv("CODEBURN_CURSOR_SYNC")
    outcome = maybe_sync(Path(LONG_DB))  # sync on: no login there, never an OSError
    assert outcome.attempted is False and outcome.error_code == "login"
    assert env.fake.requests == []


def _cli(argv: list[str], **env: str) -> subprocess.CompletedProcess[bytes]:
    code = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        env={**os.environ, **env},
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def foreign_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An imported row for a model whose name cp1252 cannot write."""
    isolated_env(tmp_path, monkeypatch)
    row = ExportRow(iso_local(days_ago(1), 10), "claude-日本", input=100, output=10, cost="$0.50")
    path = write_export(tmp_path / "usage-events.csv", [row])
    argv = ["import", "cursor", str(path), "--cursor-db", str(tmp_path / "none.vscdb")]
    done = _cli(argv)
    assert done.returncode == 0, done.stderr.decode()


REPORT = ["report", "--period", "week"]
NO_DB = {"CODEBURN_CURSOR_DB": "/nowhere/x.vscdb"}  # no-data (an explicit --cursor-db: exit 1)


@pytest.mark.usefixtures("foreign_model")
def test_non_utf8_stdout_writes_ascii_safe_json_and_replaced_text() -> None:
    done = _cli([*REPORT, "--format", "json"], PYTHONIOENCODING="cp1252", **NO_DB)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.isascii()
    names = [m["name"] for m in json.loads(done.stdout)["models"]]
    assert names == ["claude-日本"]  # \\u escapes: the same JSON

    done = _cli(REPORT, PYTHONIOENCODING="cp1252", **NO_DB)
    assert (done.returncode, done.stderr) == (0, b"")
    assert b"claude-??" in done.stdout and b"$0.50" in done.stdout

    done = _cli(["status"], PYTHONIOENCODING="ascii", **NO_DB)
    assert (done.returncode, done.stderr) == (0, b"")


@pytest.mark.usefixtures("foreign_model")
def test_utf8_stdout_is_unchanged() -> None:
    done = _cli([*REPORT, "--format", "json"], PYTHONIOENCODING="utf-8", **NO_DB)
    assert done.returncode == 0 and '"claude-日本"'.encode() in done.stdout
    done = _cli(REPORT, PYTHONIOENCODING="utf-8", **NO_DB)
    assert done.returncode == 0 and "claude-日本".encode() in done.stdout


def _unusable(tmp_path: Path, kind: str) -> Path:
    """A cache folder no process can use, even as root: a file, under a file, /dev/null."""
    regular = tmp_path / "a-file"
    regular.write_text("not a folder")
    return {"file": regular, "under-file": regular / "cache", "dev-null": Path("/dev/null")}[kind]


@pytest.mark.parametrize("kind", ["file", "under-file", "dev-null"])
def test_unusable_cache_folder_serves_figures_uncached(
    env: SyncEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    kind: str,
) -> None:
    db = write_hand_profile(tmp_path / "profile", days_ago(2), days_ago(1))
    _store_token(db, env.token)  # signed in: only the folder stops a sync
    csv = write_export(tmp_path / "usage.csv", [ExportRow(iso_local(days_ago(1), 9), "gpt-5")])
    env.fake.rows.append(ExportRow(iso_local(days_ago(1), 10), "gpt-5", input=5, output=1))
    report = ["report", "--period", "30days", "--format", "json", "--cursor-db", str(db)]
    status = ["status", "--format", "json", "--no-sync", "--cursor-db", str(db)]
    monkeypatch.setenv("CODEBURN_CURSOR_SYNC", "0")
    assert main(report) == 0 and main(status) == 0
    want = capsys.readouterr().out
    monkeypatch.delenv("CODEBURN_CURSOR_SYNC")  # automatic sync on from here

    folder = _unusable(tmp_path, kind)
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(folder))
    monkeypatch.setattr(files, "_UNUSABLE", set(), raising=False)
    caplog.set_level(logging.WARNING, logger="codeburn")
    for _ in range(2):
        assert main(report) == 0 and main(status) == 0
    got = capsys.readouterr()
    assert _figures(got.out) == _figures(want * 2)
    assert env.fake.requests == []  # nothing could be stored: no automatic sync either
    said = [r.getMessage() for r in caplog.records if "is not a folder" in r.getMessage()]
    assert len(said) == 1 and "without caching" in said[0], said

    shown = str(tmp_path / "a-file") if kind != "dev-null" else "/dev/null"
    for argv in (["import", "cursor", str(csv)], ["import", "cursor", "--sync"]):
        assert main([*argv, "--cursor-db", str(db)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("codeburn import cursor: nothing was ") and err.count("\n") == 1
        assert f"{shown} is not a folder" in err, err
    assert main(["import", "cursor", "--remove", "--cursor-db", str(db)]) == 0
    assert "Nothing to remove" in capsys.readouterr().out  # no store can be there
    assert env.fake.requests == []
    assert (tmp_path / "a-file").read_text() == "not a folder"


def _figures(text: str) -> list[dict[str, Any]]:
    """Each JSON document printed, without the sync block and the moment it was made."""
    docs, at, decoder = [], 0, json.JSONDecoder()
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        doc, at = decoder.raw_decode(text, at)
        docs.append({k: v for k, v in doc.items() if k not in ("cursorSync", "generatedAt")})
    return docs
