"""`$/progress` bookkeeping: a bar only for a parse that outlasts the delay, begin → report → end,
fed from a worker thread. (The end-to-end bar of a slow sync is in test_lsp_sync.py.)"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, cast

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from codeburn.server.lsp.progress import ParseProgress, WorkProgress


class RecordingProgress:
    """Stands in for the client side of pygls' `Progress`: records what would be sent."""

    def __init__(self, refuse: bool = False) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.tokens: dict[Any, Any] = {}
        self.refuse = refuse

    async def create_async(self, token: str) -> None:
        if self.refuse:
            raise RuntimeError("no progress here")
        self.tokens[token] = object()
        self.sent.append(("create", token))

    def begin(self, token: str, value: types.WorkDoneProgressBegin) -> None:
        self.sent.append(("begin", value))

    def report(self, token: str, value: types.WorkDoneProgressReport) -> None:
        self.sent.append(("report", value))

    def end(self, token: str, value: types.WorkDoneProgressEnd) -> None:
        self.sent.append(("end", value))


class Server:
    def __init__(self, refuse: bool = False) -> None:
        self.work_done_progress = RecordingProgress(refuse)


def _server(refuse: bool = False) -> tuple[LanguageServer, RecordingProgress]:
    server = Server(refuse)
    return cast(LanguageServer, server), server.work_done_progress


def _in_thread(callback: ParseProgress, *steps: tuple[int, int]) -> None:
    thread = threading.Thread(target=lambda: [callback(*s) for s in steps])
    thread.start()
    thread.join()


async def test_fast_parse_shows_no_bar() -> None:
    server, recorded = _server()
    progress = ParseProgress(server, delay_s=0.2)
    progress.bind(asyncio.get_running_loop(), enabled=True)
    _in_thread(progress, (100, 1000), (1000, 1000))
    await asyncio.sleep(0)
    await progress.finish()
    await asyncio.sleep(0.3)
    assert recorded.sent == []


async def test_slow_parse_opens_a_bar_with_reports_and_ends_it() -> None:
    server, recorded = _server()
    progress = ParseProgress(server, delay_s=0.05)
    progress.bind(asyncio.get_running_loop(), enabled=True)
    _in_thread(progress, (250, 1000))
    await asyncio.sleep(0.2)  # the parse is still running after the delay
    _in_thread(progress, (600, 1000), (1000, 1000))
    await asyncio.sleep(0.05)
    await progress.finish()
    kinds = [kind for kind, _ in recorded.sent]
    assert kinds == ["create", "begin", "report", "report", "end"]
    begin = recorded.sent[1][1]
    assert begin.title == "CodeBurn: reading Cursor history" and begin.percentage == 25
    assert [v.percentage for k, v in recorded.sent if k == "report"] == [60, 100]
    assert recorded.tokens == {}  # the token is forgotten once the bar ended


async def test_disabled_progress_sends_nothing() -> None:
    server, recorded = _server()
    progress = ParseProgress(server, delay_s=0.0)
    progress.bind(asyncio.get_running_loop(), enabled=False)
    _in_thread(progress, (1, 2))
    await asyncio.sleep(0.05)
    await progress.finish()
    assert recorded.sent == []


async def test_a_refused_token_means_no_begin_and_no_end() -> None:
    server, recorded = _server(refuse=True)
    work = WorkProgress(server, "Syncing")
    work.start()
    work.update(1, 2)
    await work.end("done")
    assert recorded.sent == []
