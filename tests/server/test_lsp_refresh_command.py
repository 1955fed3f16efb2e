"""The refresh command reads after it came (docs/lsp.md: `codeburn.server.refresh`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from codeburn.server.lsp.run import build_server

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


@pytest.mark.parametrize("synced", [False, True])
async def test_the_refresh_command_never_answers_with_a_read_that_began_before_it(
    monkeypatch: pytest.MonkeyPatch, synced: bool
) -> None:
    """A read in flight when the command comes (the timer's, the first status's) may have begun
    before what the user wants to see was written: the command waits for a read that begins
    after it, shared with any other caller meanwhile, whether or not a sync changed anything."""
    server = build_server()
    server._ready.set()  # settings pulled
    began: list[int] = []
    release = [asyncio.Event(), asyncio.Event()]

    async def read_status(generation: int) -> tuple[int, dict[str, Any]]:
        read = len(began)
        began.append(generation)
        await release[read].wait()
        return generation, {"read": read}

    async def cursor_pass() -> bool:
        return synced

    monkeypatch.setattr(server, "_read_status", read_status)
    monkeypatch.setattr(server, "_cursor_pass", cursor_pass)
    in_flight = asyncio.ensure_future(server.refresh(fresh=True))  # e.g. the timer's read
    await _settle()
    assert len(began) == 1
    command = asyncio.ensure_future(server.refresh_now())
    await _settle()
    assert not command.done()
    release[0].set()
    assert await in_flight == {"read": 0}
    await _settle()
    assert len(began) == 2 and not command.done()  # a second read began after the command
    release[1].set()
    assert await command == {"read": 1}


async def _settle() -> None:
    """Let every task that can run, run (the tasks above wait on events, never on time)."""
    for _ in range(10):
        await asyncio.sleep(0)
