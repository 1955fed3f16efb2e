"""The `codeburn` process ends without freeing what it built (`run`, `os._exit`): its whole
answer is still written, its exit code kept, and the cache writer forked at its end still
writes what the next command reads."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from codeburn.cache.results_cache import results_path
from codeburn.providers import runtime
from codeburn.server.cli import main as cli_main
from codeburn.server.cli.main import WRITERS_LOCK, main
from tests.usage_fixtures import days_ago, isolated_env, write_hand_profile


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
    runtime.wait_for_writers(env.cache / WRITERS_LOCK)
    assert results_path(env.cache).is_file()  # the writer forked at the end did its work
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
def test_a_kept_block_keeps_what_its_works_hold_past_its_end(tmp_path: Path, keep: bool) -> None:
    held = _Held()
    alive = weakref.ref(held)
    with runtime.detached_after(tmp_path / WRITERS_LOCK, keep=keep):
        runtime.later(lambda held=held: held)
    del held
    gc.collect()
    assert (alive() is not None) is (keep and runtime.can_fork())
    runtime._kept.clear()  # (this process goes on: the tests' own end frees it)
    runtime.wait_for_writers(tmp_path / WRITERS_LOCK)


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
