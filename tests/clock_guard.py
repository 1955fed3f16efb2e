"""The guard of the `clock` mark: a test that reads the suite's moment says what it is.

`bash ./dev test` runs only the tests marked `clock` again at the fixed moments of tests/clock.py,
so a test that reads the moment unnoticed would never meet a month's end or a DST day. Each test
that reads it is marked either `clock` (its outcome may change with the moment: a period, a
billing cycle, sealed days, the six-month floor, a forecast) or `any_moment` (it reads the clock,
but no moment changes what it checks: a lock, a malformed message, a secret in a log); an
unmarked one fails. A test reads the suite's moment when, during its set-up or its body (or the
set-up of a fixture it uses, or its module's import):

- this process reads the product's clock (`providers/localtime.py`: `now_ns`, and so `now_ms`
  and `today`) while no moment of the test's own (`time_machine.travel`) is in force; or
- it starts a Python subprocess of CodeBurn's (its command line names `codeburn`) on the suite's
  clock: `CODEBURN_NOW` inherited, not set to a moment of the test's own.

Only the reading is watched, never the value: the guard changes no figure. A test that reads
nothing needs no mark (a decoder of fixed dates: its local days depend on the zone, not the
moment). At a fixed moment (`--clock`) a test marked `clock` that reads none fails too: it would
run again at every moment for nothing. `--clock-audit=PATH` writes every test's id, mark and
reading as JSON lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import time_machine

from codeburn.providers import localtime
from codeburn.providers.localtime import CLOCK_ENV

MARK = "clock"
READS_ONLY = "any_moment"


class _WatchedTime:
    """`localtime`'s `time` module, noting each read of the wall clock (`time_ns`)."""

    def __init__(self, real: ModuleType) -> None:
        # the module's other functions as plain attributes: local days stay one lookup away
        vars(self).update((k, v) for k, v in vars(real).items() if not k.startswith("__"))
        del self.time_ns
        self._real = real
        self.baseline = len(time_machine.traveller_stack)  # the suite's own travel, if any
        self.read = False
        self._paused = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def time_ns(self) -> int:
        if not getattr(self._paused, "on", False) and (
            len(time_machine.traveller_stack) <= self.baseline
        ):
            self.read = True
        return int(self._real.time_ns())

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Reads by the harness itself (the subprocesses' start instant) are not the test's."""
        self._paused.on = True
        try:
            yield
        finally:
            self._paused.on = False


def _names_codeburn(args: Any) -> bool:
    parts = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
    return any("codeburn" in os.fsdecode(part) for part in parts)


class ClockGuard:
    """Watches each test for a read of the suite's moment; fails an unmarked one that reads."""

    def __init__(self, audit: str, *, fixed: bool) -> None:
        self.watch = _WatchedTime(localtime.time)
        self._fixed = fixed  # a run at a moment of tests/clock.py: every `clock` test reads it
        self._audit = Path(audit) if audit else None
        self._reading_fixtures: set[int] = set()
        self._reading_modules: set[str] = set()
        self._popen_init = subprocess.Popen.__init__

    def start(self) -> None:
        localtime.time = self.watch  # type: ignore[assignment]
        watch, real_init = self.watch, self._popen_init

        def init(popen: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
            env = kwargs.get("env")
            inherited = env is None or env.get(CLOCK_ENV) == os.environ.get(CLOCK_ENV)
            if inherited and _names_codeburn(args):
                watch.read = True
            real_init(popen, args, *rest, **kwargs)

        subprocess.Popen.__init__ = init  # type: ignore[method-assign]

    def stop(self) -> None:
        localtime.time = self.watch._real  # type: ignore[assignment]
        subprocess.Popen.__init__ = self._popen_init  # type: ignore[method-assign]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None]:
        """A module that reads the moment as it is imported: all its tests read it."""
        self.watch.read = False
        yield
        if isinstance(collector, pytest.Module) and self.watch.read:
            self._reading_modules.add(str(collector.path))
        self.watch.read = False

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None]:
        """A fixture that reads the moment: every test that uses it reads it (it may be cached)."""
        before, self.watch.read = self.watch.read, False
        yield
        if self.watch.read:
            self._reading_fixtures.add(id(fixturedef))
        self.watch.read = before or self.watch.read

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None]:
        self.watch.read = False
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any]:
        outcome = yield
        if call.when != "call":
            return
        report: pytest.TestReport = outcome.get_result()
        reads = self._reads(item)
        marked = item.get_closest_marker(MARK) is not None
        said = marked or item.get_closest_marker(READS_ONLY) is not None
        if self._audit is not None:
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            with open(f"{self._audit}.{worker}", "a", encoding="utf-8") as out:
                out.write(
                    json.dumps({"test": item.nodeid, "marked": marked, "reads": reads}) + "\n"
                )
        if reads and not said and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} reads the suite's moment (the product's clock, or a CodeBurn "
                "subprocess on it) unmarked: mark it `pytest.mark.clock` when the moment may "
                "change its outcome (./dev test runs it at every moment of tests/clock.py), else "
                "`pytest.mark.any_moment` (tests/clock_guard.py)"
            )
        elif self._fixed and marked and not reads and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} is marked `clock` but read no moment of the suite's: it runs "
                "again at every moment of tests/clock.py for nothing; unmark it "
                "(tests/clock_guard.py)"
            )

    def _reads(self, item: pytest.Item) -> bool:
        if self.watch.read or str(item.path) in self._reading_modules:
            return True
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            return False
        return any(
            id(defs[-1]) in self._reading_fixtures
            for name in info.names_closure
            if (defs := info.name2fixturedefs.get(name))
        )
