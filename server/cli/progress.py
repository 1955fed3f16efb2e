"""A progress bar on stderr for parses that take more than a second (terminals only)."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

DELAY_S: Final = 1.0


class _DelayedBar:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < DELAY_S:
                return
            from rich.console import Console  # noqa: PLC0415
            from rich.progress import Progress  # noqa: PLC0415

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("Reading Cursor history", total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@contextlib.contextmanager
def terminal_progress() -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback when stderr is a terminal, else None."""
    if not sys.stderr.isatty():
        yield None
        return
    bar = _DelayedBar()
    try:
        yield bar
    finally:
        bar.close()
