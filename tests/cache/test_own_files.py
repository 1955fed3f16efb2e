"""Our own files under hostile conditions (issue 10, defects 6, 8, 9, 11): cache files that are
deeply nested JSON or folders, a config budget no float can hold, umask 000, no `os.fchmod`,
and what a killed process leaves behind."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeburn.cache import leftovers
from codeburn.cache.config import Budget, budget_from_config
from codeburn.cache.daily_cache import daily_path
from codeburn.cache.files import locked, private_dir, write_json_atomic
from codeburn.cache.results_cache import results_object, results_path
from codeburn.providers import sqlite_ro
from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from codeburn.server.service.usage import UsageService
from tests.usage_fixtures import isolated_env, write_profile_with_today

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


HOUR_MS = 3_600_000


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_env(tmp_path, monkeypatch).cache


@pytest.fixture
def umask_000() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _status(db: Path) -> dict:
    status = UsageService(db).status(budget=Budget(), sync=False)
    assert status is not None
    return status


@pytest.mark.parametrize("damage", ["deep", "folder", "folder-with-files"])
@pytest.mark.clock
def test_damaged_cache_files_are_rebuilt_silently(tmp_path: Path, env: Path, damage: str) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    good = _status(db)
    for path in (results_path(env), daily_path(env)):
        path.unlink(missing_ok=True)
        if damage == "deep":
            path.write_text("[" * 3000 + "]" * 3000)
        else:
            path.mkdir()
            if damage == "folder-with-files":
                (path / "inside").write_text("x")
    again = _status(db)
    assert again["today"] == good["today"] and again["month"] == good["month"]
    assert results_path(env).is_file()  # rebuilt in place of the folder
    assert results_object(results_path(env).read_bytes())


@pytest.mark.parametrize(
    "budget",
    [
        '{"daily": 1' + "0" * 400 + ', "monthly": 1e309}',
        '{"daily": -1e309, "monthly": NaN}',
        '{"daily": {"amount": 5}, "monthly": [100]}',
        '{"daily": ' + "[" * 3000 + "]" * 3000 + "}",
    ],
)
@pytest.mark.clock
def test_a_budget_no_float_can_hold_means_no_budget(
    env: Path, tmp_path: Path, budget: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.json").write_text('{"budget": ' + budget + "}")
    assert budget_from_config() == Budget()
    db = write_profile_with_today(tmp_path / "Cursor")
    assert main(["status", "--format", "json", "--cursor-db", str(db)]) == 0
    status = json.loads(capsys.readouterr().out, parse_constant=_no_constants)
    assert status["budget"] == {"daily": None, "monthly": None, "level": "ok"}


def _no_constants(name: str) -> None:
    raise AssertionError(f"{name} in JSON output")


def test_folders_we_create_are_private_under_umask_000(tmp_path: Path, umask_000: None) -> None:
    target = tmp_path / "a" / "b" / "c.json"
    write_json_atomic(target, {"x": 1})
    assert (_mode(tmp_path / "a"), _mode(tmp_path / "a" / "b"), _mode(target)) == (
        0o700,
        0o700,
        0o600,
    )
    with locked(tmp_path / "d" / "e.json"):
        pass
    assert _mode(tmp_path / "d") == 0o700
    assert private_dir(tmp_path / "a") == tmp_path / "a"


def test_an_existing_folder_keeps_its_mode(tmp_path: Path, umask_000: None) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    write_json_atomic(shared / "mine" / "f.json", [])
    assert (_mode(shared), _mode(shared / "mine")) == (0o755, 0o700)


def test_writes_work_without_os_fchmod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fchmod", raising=False)  # Windows before Python 3.13
    write_json_atomic(tmp_path / "f.json", {"ok": True})
    assert json.loads((tmp_path / "f.json").read_text()) == {"ok": True}
    assert _mode(tmp_path / "f.json") == 0o600


def _aged(path: Path, age_ms: int) -> Path:
    """`path` last modified `age_ms` ago by the suite's clock (the kernel uses the real one)."""
    ns = (now_ms() - age_ms) * 1_000_000
    os.utime(path, ns=(ns, ns))
    return path


@pytest.mark.clock
def test_leftovers_older_than_an_hour_are_swept(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    snapshots = leftovers.snapshot_root()
    old_snap = snapshots / "codeburn-snapshot-old1"
    old_snap.mkdir()
    (old_snap / "state.vscdb").write_bytes(b"token copy")
    _aged(old_snap, 2 * HOUR_MS)
    new_snap = snapshots / "codeburn-snapshot-new1"
    new_snap.mkdir()
    _aged(new_snap, 50 * 60_000)  # 50 minutes: a parse may still be reading it
    legacy = tmp_path / "tmp" / "codeburn-snapshot-legacy"
    legacy.mkdir()
    _aged(legacy, 3 * HOUR_MS)
    old_tmp = env / ".cursor-results.v2.json.abc123.tmp"
    old_tmp.write_bytes(b"x" * 100)
    _aged(old_tmp, 2 * HOUR_MS)
    (env / "imports").mkdir()
    nested_tmp = env / "imports" / ".cursor-usage.v3.json.zz.tmp"
    nested_tmp.write_bytes(b"y")
    _aged(nested_tmp, 2 * HOUR_MS)
    fresh_tmp = env / ".daily.v1.json.fresh.tmp"
    fresh_tmp.write_bytes(b"z")
    _aged(fresh_tmp, 0)
    kept = env / "cursor-results.v2.json"
    kept.write_text("{}")
    _aged(kept, 5 * HOUR_MS)

    assert leftovers.sweep_leftovers() == 4
    assert not old_snap.exists() and not legacy.exists()
    assert not old_tmp.exists() and not nested_tmp.exists()
    assert new_snap.exists() and fresh_tmp.exists() and kept.exists()


@pytest.mark.clock
def test_a_snapshot_copy_is_made_in_a_private_folder_under_our_cache(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.bubble("c", "b", role="assistant", text="x", created_at=iso_utc(now_ms()))
    with sqlite_ro._snapshot(p.db_path) as conn:  # what a read-only Cursor folder gets
        (path,) = [row[2] for row in conn.execute("PRAGMA database_list")]
        copy = Path(path)
        assert copy.parent.parent == env / "snapshots"
        assert _mode(copy.parent) == 0o700 and _mode(env / "snapshots") == 0o700
        assert conn.execute("SELECT count(*) FROM cursorDiskKV").fetchone() == (1,)
    assert not copy.parent.exists()
    assert list(shared.iterdir()) == []
