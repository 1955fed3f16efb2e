"""The `codeburn` process ends without freeing what it built (`run`, `os._exit`): its whole
answer is still written, its exit code kept, and every cache file it writes is written before
it returns, by itself: no process or thread it started outlives it."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest

from codeburn.cache.agent_memo import agent_memo_path
from codeburn.cache.blob_memo import blob_memo_path
from codeburn.cache.daily_cache import daily_path
from codeburn.cache.results_cache import results_path
from codeburn.providers import runtime
from codeburn.providers.samples.cursor3 import Cursor3Spec, generate_cursor3_profile
from codeburn.server.cli import main as cli_main
from codeburn.server.cli.main import main
from tests.usage_fixtures import days_ago, isolated_env, write_hand_profile

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def _process(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "codeburn.server.cli", *argv],
        # block-buffered stdout (as a pipe has it), so that only the flush at the end writes it
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_the_process_writes_its_whole_answer_and_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = isolated_env(tmp_path, monkeypatch)
    db = write_hand_profile(tmp_path / "profile", days_ago(3), days_ago(2))
    argv = ["report", "--format", "json", "--period", "30days", "--cursor-db", str(db)]
    done = _process(argv)
    assert done.returncode == 0, done.stderr.decode()
    assert results_path(env.cache).is_file()  # written before the process returned
    assert main(argv) == 0  # in process, from the cache the process wrote
    assert done.stdout.decode() == capsys.readouterr().out
    again = _process(argv)  # (from the cache)
    assert again.returncode == 0 and again.stdout == done.stdout
    assert '"calls"' in done.stdout.decode()

    helped = _process(["--help"])  # no command: nothing forked, nothing flushed before the end
    assert helped.returncode == 0 and b"usage: codeburn" in helped.stdout
    unusable = _process(["report", "--period", "fortnight"])
    assert unusable.returncode == 2 and b"invalid choice" in unusable.stderr
    missing = _process(["report", "--cursor-db", str(tmp_path / "none.vscdb")])
    assert missing.returncode == 1 and missing.stderr.count(b"\n") == 1


class _Held:
    """Something a later work holds (weakly referable)."""


@pytest.mark.parametrize("keep", [True, False])
def test_a_kept_block_keeps_what_its_works_hold_past_its_end(keep: bool) -> None:
    held = _Held()
    alive = weakref.ref(held)
    with runtime.writes_at_end(keep=keep):
        runtime.later(lambda held=held: held)
    del held
    gc.collect()
    assert (alive() is not None) is keep
    runtime._kept.clear()  # (this process goes on: the tests' own end frees it)


@pytest.mark.parametrize(("command", "collects"), [("status", False), ("serve", True)])
def test_a_command_that_ends_the_process_runs_without_cyclic_gc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, collects: bool
) -> None:
    # Only a command that ends with the process (`run`): the language server lives on.
    isolated_env(tmp_path, monkeypatch)
    db = write_hand_profile(tmp_path / "profile", days_ago(3), days_ago(2))
    seen: list[bool] = []
    monkeypatch.setitem(cli_main.COMMANDS, command, lambda _args: seen.append(gc.isenabled()) or 0)
    argv = [command] if command == "serve" else [command, "--cursor-db", str(db)]
    assert gc.isenabled()
    try:
        assert main(argv) == 0
        assert main(argv, ends_process=True) == 0
        assert seen == [True, collects]
    finally:
        gc.enable()
        runtime._kept.clear()


def _alive_in_session(sid: int) -> list[int]:
    """Processes of session `sid` still running (a forked writer keeps its parent's session,
    also once it belongs to nobody); zombies are ended."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            alive.append(int(stat.parent.name))
    return alive


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_nothing_outlives_a_cold_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When `codeburn report` returns, every cache file it writes is in place, no process it
    started is running, and its cache folder can be removed at once (docs/robustness.md)."""
    isolated_env(tmp_path, monkeypatch)
    info = generate_cursor3_profile(
        tmp_path / "Cursor", tmp_path / "home", Cursor3Spec(conversations=8, classic=0)
    )
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(info.home))
    cache = tmp_path / "cache"
    argv = [sys.executable, "-m", "codeburn.server.cli", "report", "--format", "json"]
    argv += ["--period", "30days", "--cursor-db", str(info.db_path)]
    outputs, listings = set(), []
    for run in range(4):
        # its own session: whatever it forks stays in it, whoever its parent becomes
        with subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        ) as process:
            out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        assert _alive_in_session(process.pid) == []
        written = _files(cache)
        if run == 0:
            time.sleep(1.5)  # nothing more appears, or grows, once it has returned
            assert _files(cache) == written
        shutil.rmtree(cache)  # "Directory not empty" while a writer was still at work
        assert not cache.exists()
        outputs.add(out)
        listings.append(written)
    assert len(outputs) == 1 and b'"calls"' in out
    assert all(listing.keys() == listings[0].keys() for listing in listings), listings
    ours = (results_path(cache), blob_memo_path(cache), agent_memo_path(cache), daily_path(cache))
    assert {p.name for p in ours} <= set(listings[0])
