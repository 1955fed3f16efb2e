"""Suite-wide: the clock the suite runs at (`--clock`), Hypothesis profiles, and a guard: after
every test has run, no file CodeBurn wrote and no log line holds a Cursor secret (the access
token, the cookie built from it, the user id)."""

from __future__ import annotations

import os

os.environ.pop("CODEBURN_NOW", None)  # set per test below, for subprocesses only

import logging
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import time_machine
from hypothesis import settings

from codeburn.providers.localtime import CLOCK_ENV, iso_utc, now_ms
from tests import clock
from tests.clock_guard import ClockGuard
from tests.sync.fake_cursor import TEST_SUB, TEST_USER_ID, make_jwt

# Property tests: CI replays the same examples on every run (derandomized, no example database);
# locally the default profile keeps exploring and remembers failures in .hypothesis/. Neither has
# a deadline (no wall-clock limits in unit tests). `CODEBURN_HYPOTHESIS_PROFILE` picks one.
settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=100, deadline=None, print_blob=True
)
settings.register_profile("dev", deadline=None)
settings.load_profile(
    os.environ.get("CODEBURN_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

OUR_FOLDERS = {"cache", "config"}  # every test points CODEBURN_CACHE_DIR/CONFIG_DIR at these


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--clock",
        default=os.environ.get("CODEBURN_TEST_CLOCK", ""),
        help=f"run the suite at a moment: {', '.join(clock.CLOCKS)} or ISO@Area/City "
        "(default: the real clock; env CODEBURN_TEST_CLOCK)",
    )
    parser.addoption(
        "--clock-audit",
        default="",
        metavar="PATH",
        help="write each test's id, `clock` mark and whether it read the suite's moment as "
        "JSON lines to PATH.<worker> (tests/clock_guard.py)",
    )


def pytest_report_header(config: pytest.Config) -> str:
    name = config.getoption("--clock")
    if name:
        return f"clock: {name} = {clock.resolve(name).isoformat()}"
    moved = config.stash.get(_TRAVEL, None)
    return f"clock: real, moved off midnight to {moved[0].isoformat()}" if moved else "clock: real"


_TRAVEL = pytest.StashKey[tuple[datetime, time_machine.travel]]()
_GUARD = pytest.StashKey[ClockGuard]()


def pytest_configure(config: pytest.Config) -> None:
    """Before collection, so that module-level times in the tests are on the suite's clock."""
    name = config.getoption("--clock")
    moment = clock.resolve(name) if name else clock.near_midnight_noon(datetime.now().astimezone())
    if moment is not None:
        travel = time_machine.travel(moment, tick=True)
        travel.start()
        config.stash[_TRAVEL] = (moment, travel)
    # after the suite's travel: its baseline
    guard = ClockGuard(config.getoption("--clock-audit"), fixed=bool(config.getoption("--clock")))
    guard.start()
    config.pluginmanager.register(guard, "clock-guard")
    config.stash[_GUARD] = guard


def pytest_unconfigure(config: pytest.Config) -> None:
    if _GUARD in config.stash:
        config.stash[_GUARD].stop()
    if _TRAVEL in config.stash:
        config.stash[_TRAVEL][1].stop()


@pytest.fixture(scope="session")
def suite_clock(request: pytest.FixtureRequest) -> datetime | None:
    """The moment the suite started at (time ticks on from there), or None: the real clock."""
    travel = request.config.stash.get(_TRAVEL, None)
    return travel[0] if travel is not None else None


@pytest.fixture(autouse=True)
def subprocess_clock(
    suite_clock: datetime | None, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[None]:
    """Subprocesses started by this test start at this process's (moved) clock."""
    if suite_clock is not None:
        with request.config.stash[_GUARD].watch.paused():  # the harness's read, not the test's
            monkeypatch.setenv(CLOCK_ENV, iso_utc(now_ms()))
    yield


def _needles() -> list[bytes]:
    jwt_header = make_jwt().split(".", 1)[0]  # every test token starts with it
    return [s.encode() for s in (jwt_header, TEST_SUB, TEST_USER_ID, "WorkosCursorSessionToken")]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception:
            self.lines.append(str(record.msg))


@pytest.fixture(scope="session", autouse=True)
def no_secret_anywhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    collect = _Collect()
    ours = logging.getLogger("codeburn")
    level = ours.level
    ours.setLevel(logging.DEBUG)
    logging.getLogger().addHandler(collect)
    yield
    logging.getLogger().removeHandler(collect)
    ours.setLevel(level)
    base = tmp_path_factory.getbasetemp()
    leaks = [
        f"{path.relative_to(base)} holds {needle.decode()!r}"
        for path in base.rglob("*")
        if path.is_file() and OUR_FOLDERS & set(path.relative_to(base).parts)
        for needle in _needles()
        if needle in path.read_bytes()
    ]
    leaks += [
        f"log line holds {needle.decode()!r}: {line[:120]}"
        for line in collect.lines
        for needle in _needles()
        if needle.decode() in line
    ]
    assert not leaks, "secrets leaked:\n" + "\n".join(leaks)


@pytest.fixture(autouse=True)
def no_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """No `COLUMNS`/`LINES` from outside: pytest-xdist's workers get 80×24, a terminal its own
    size, and the CLI's text follows `COLUMNS` in a pipe. A test that wants a width sets one."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def no_real_cursor_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Transcripts and CLI sessions come only from what a test writes, never the real ~/.cursor."""
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "cursor-home"))


@pytest.fixture(autouse=True)
def no_real_agent_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's and Codex's logs come only from what a test writes, never the developer's
    own ~/.claude, ~/.config/claude or ~/.codex (docs/other-tools.md): both point at empty
    folders of the test's own (subprocesses inherit them)."""
    claude, codex = tmp_path / "claude-config", tmp_path / "codex-home"
    claude.mkdir(exist_ok=True)
    codex.mkdir(exist_ok=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
