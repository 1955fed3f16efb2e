"""`$/progress` for long work: created on the loop, fed from worker threads.

Only used when the client declared `window.workDoneProgress`. A session asks the client for a
token (`window/workDoneProgress/create`), then sends begin → report* → end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import TYPE_CHECKING, Final

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

PARSE_DELAY_S: Final = 1.0


class WorkProgress:
    """One progress session; every method runs on the event loop."""

    def __init__(self, server: LanguageServer, title: str) -> None:
        self._server = server
        self._title = title
        self.token = f"codeburn-{uuid.uuid4()}"
        self._opening: asyncio.Task[bool] | None = None
        self._open = False
        self._ended = False
        self._percent: int | None = None

    def start(self) -> None:
        """Ask for the token without waiting; `begin` is sent once the client agrees."""
        if self._opening is None and not self._ended:
            self._opening = asyncio.ensure_future(self._create())

    async def _create(self) -> bool:
        progress = self._server.work_done_progress
        try:
            await progress.create_async(self.token)
        except Exception as exc:  # a client may refuse; the work goes on without a bar
            log.debug("progress bar refused by the client: %s", exc)
            return False
        progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=self._title, cancellable=False, percentage=self._percent
            ),
        )
        self._open = True
        return True

    def update(self, done: int, total: int) -> None:
        percent = min(100, done * 100 // total) if total > 0 else None
        if percent == self._percent:
            return
        self._percent = percent
        if self._open and not self._ended:
            self._server.work_done_progress.report(
                self.token,
                types.WorkDoneProgressReport(percentage=percent, message=f"{done:,} of {total:,}"),
            )

    async def end(self, message: str | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        if self._opening is not None and await self._opening:
            self._server.work_done_progress.end(
                self.token, types.WorkDoneProgressEnd(message=message)
            )
        self._server.work_done_progress.tokens.pop(self.token, None)


class ParseProgress:
    """The usage service's `(done, total)` callback → a bar once a parse runs past ~1 s."""

    def __init__(self, server: LanguageServer, delay_s: float = PARSE_DELAY_S) -> None:
        self._server = server
        self._delay_s = delay_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self.enabled = False
        self._timer: asyncio.TimerHandle | None = None
        self._latest: tuple[int, int] | None = None
        self._session: WorkProgress | None = None

    def bind(self, loop: asyncio.AbstractEventLoop, *, enabled: bool) -> None:
        self._loop = loop
        self.enabled = enabled

    def __call__(self, done: int, total: int) -> None:
        """Called from the worker thread that parses."""
        if self._loop is None or not self.enabled:
            return
        with contextlib.suppress(RuntimeError):  # the loop is closing
            self._loop.call_soon_threadsafe(self._update, done, total)

    def _update(self, done: int, total: int) -> None:
        self._latest = (done, total)
        if self._session is not None:
            self._session.update(done, total)
        elif self._timer is None and self._loop is not None:
            self._timer = self._loop.call_later(self._delay_s, self._open)

    def _open(self) -> None:
        """The parse is still running a second after it started: show where it is."""
        self._timer = None
        self._session = WorkProgress(self._server, "CodeBurn: reading Cursor history")
        if self._latest is not None:
            self._session.update(*self._latest)
        self._session.start()

    async def finish(self) -> None:
        """The work that may have parsed is over: close the bar, if one was opened."""
        if self._timer is not None:
            self._timer.cancel()
        session, self._session, self._timer, self._latest = self._session, None, None, None
        if session is not None:
            await session.end()
