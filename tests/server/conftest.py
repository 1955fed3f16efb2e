"""End-to-end harness for the language server: a real `python -m codeburn.server` subprocess over
stdio, driven by a pytest-lsp client, with private cache/config folders and real Cursor databases.

    async with lsp_session(server_env) as s:
        status = await s.statuses.wait()            # the first codeburn/status
        mark = s.statuses.mark()                    # before sending what triggers the next one
        await s.command("codeburn.server.refresh")
        await s.statuses.wait(after=mark)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import JsonRPCNotification, _params_field_structure_hook, default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from codeburn.providers.localtime import CLOCK_ENV, iso_utc, local_midnight_ms, now_ms, today
from codeburn.providers.samples.profile_writer import JournalMode, ProfileWriter
from tests.sync.fake_cursor import FakeCursor, cookie_for, make_jwt, write_global_db

STATUS = "codeburn/status"
WAIT_S = 90.0  # a hang guard, not a performance limit
TICK_S = 1  # the least refresh interval the test server accepts (`refreshIntervalSeconds`)


def recent(minutes: float) -> str:
    """An ISO time `minutes` ago, but never before today's local midnight."""
    ms = max(now_ms() - int(minutes * 60_000), local_midnight_ms(today()) + 1000)
    return iso_utc(ms)


def write_profile(root: Path, *, conversations: int = 2, journal_mode: JournalMode = "wal") -> Path:
    """A Cursor data root with a few priced conversations today; returns the global DB path."""
    with ProfileWriter(root / "Cursor", journal_mode=journal_mode) as p:
        for n in range(conversations):
            p.bubble(f"c{n}", "u", role="user", text="please fix " * 30, created_at=recent(40 - n))
            p.bubble(
                f"c{n}",
                "a",
                role="assistant",
                text="done " * 400,
                created_at=recent(39 - n),
                model="gpt-5",
            )
    return p.db_path


def add_conversation(db: Path, name: str) -> None:
    """Cursor writes one more exchange while the server runs."""
    with ProfileWriter(db.parent.parent.parent) as p:
        p.bubble(name, "u", role="user", text="and now " * 30, created_at=recent(0))
        p.bubble(name, "a", role="assistant", text="ok " * 500, created_at=recent(0), model="gpt-5")


@dataclass
class ServerEnv:
    """One machine for one test: our folders, Cursor's database, the environment."""

    root: Path
    db: Path
    env: dict[str, str]

    @property
    def cache(self) -> Path:
        return Path(self.env["CODEBURN_CACHE_DIR"])

    @property
    def config(self) -> Path:
        return Path(self.env["CODEBURN_CONFIG_DIR"])

    async def cli(self, *args: str) -> dict[str, Any]:
        """`codeburn <args> --format json` in a subprocess with the same folders."""
        code = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            code,
            *args,
            "--format",
            "json",
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), WAIT_S)
        assert process.returncode == 0, err.decode()
        result: dict[str, Any] = json.loads(out)
        return result


@pytest.fixture
def server_env(tmp_path: Path) -> ServerEnv:
    """Private cache/config/home, sync off, and a small Cursor profile named by env."""
    db = write_profile(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBURN_") or k == CLOCK_ENV}
    env.update(
        CODEBURN_CACHE_DIR=str(tmp_path / "cache"),
        CODEBURN_CONFIG_DIR=str(tmp_path / "config"),
        CODEBURN_CURSOR_SYNC="0",
        CODEBURN_CURSOR_DB=str(db),
        CODEBURN_MIN_REFRESH_S=str(TICK_S),  # a timer test waits 1 s a tick, not 10
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        XDG_CACHE_HOME=str(tmp_path / "home" / ".cache"),
    )
    return ServerEnv(tmp_path, db, env)


class Statuses:
    """Every `codeburn/status` the client received, in order, as plain JSON objects."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    def add(self, params: Any) -> None:
        self.items.append(params)
        self._changed.set()

    def mark(self) -> int:
        return len(self.items)

    async def wait(
        self, predicate: Callable[[dict[str, Any]], bool] | None = None, *, after: int = 0
    ) -> dict[str, Any]:
        """The first status at index ≥ `after` that matches."""

        async def scan() -> dict[str, Any]:
            index = after
            while True:
                while index < len(self.items):
                    item = self.items[index]
                    if predicate is None or predicate(item):
                        return item
                    index += 1
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(scan(), WAIT_S)
        except TimeoutError:
            seen = [(st.get("state"), st.get("today"), st.get("budget")) for st in self.items]
            raise AssertionError(
                f"no matching codeburn/status after #{after}; got {seen}"
            ) from None


def _converter() -> Any:
    """pygls turns unknown notification params into namedtuples; keep ours as JSON objects."""
    converter = default_converter()

    def structure(obj: Any, cls: type) -> Any:
        if obj.get("method") == STATUS:
            return cls(**obj)
        return _params_field_structure_hook(obj, cls)

    converter.register_structure_hook(JsonRPCNotification, structure)
    return converter


@dataclass
class Session:
    client: LanguageClient
    statuses: Statuses
    capabilities: types.ServerCapabilities
    registrations: list[Any] = field(default_factory=list)

    async def command(self, name: str, *arguments: Any) -> Any:
        params = types.ExecuteCommandParams(command=name, arguments=list(arguments))
        return await self.client.workspace_execute_command_async(params)

    def progress_titles(self) -> dict[str, list[Any]]:
        """token → reports, for sessions that began."""
        return {
            str(token): reports
            for token, reports in self.client.progress_reports.items()
            if reports and isinstance(reports[0], types.WorkDoneProgressBegin)
        }

    def logs(self) -> list[str]:
        return [m.message for m in self.client.log_messages]


def make_client(statuses: Statuses, registrations: list[Any]) -> LanguageClient:
    client = LanguageClient(converter_factory=_converter)
    register_lsp_features(client)

    @client.feature(STATUS)
    def on_status(ls: LanguageClient, params: Any) -> None:
        statuses.add(params)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(ls: LanguageClient, params: types.RegistrationParams) -> None:
        registrations.append(params)

    return client


@asynccontextmanager
async def lsp_session(
    server_env: ServerEnv,
    *,
    settings: dict[str, Any] | None = None,
    init_options: Any = None,
    capabilities: types.ClientCapabilities | None = None,
    command: tuple[str, ...] = ("-m", "codeburn.server"),
) -> AsyncIterator[Session]:
    """Start the server, initialize it as VS Code would, and shut it down cleanly afterwards."""
    statuses, registrations = Statuses(), []
    client = make_client(statuses, registrations)
    if settings is not None:
        client.set_configuration(settings, section="codeburn")
    await client.start_io(sys.executable, *command, env=server_env.env)
    process = client._server
    try:
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or client_capabilities("visual-studio-code"),
                initialization_options=init_options,
            )
        )
        yield Session(client, statuses, result.capabilities, registrations)
        await asyncio.wait_for(client.shutdown_session(), WAIT_S)
        assert process is not None and process.returncode == 0  # shutdown + exit → 0
    finally:
        if process is not None and process.returncode is None:
            process.kill()  # a failed test must not leave the server (and stop()) hanging
        await client.stop()


def same_figures(a: Any, b: Any, path: str = "") -> None:
    """Deep equality with float tolerance (sums may be added in another order)."""
    if isinstance(a, float) or isinstance(b, float):
        assert b == pytest.approx(a, rel=1e-9, abs=1e-12), path
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            same_figures(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same_figures(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


def without(status: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k not in keys}


WEEK_S = 7 * 24 * 3600


@pytest.fixture
def fake() -> Iterator[FakeCursor]:
    """A loopback cursor.com (tests/sync/fake_cursor.py)."""
    with FakeCursor() as server:
        yield server


@pytest.fixture
def signed_in(server_env: ServerEnv, fake: FakeCursor) -> ServerEnv:
    """Cursor signed in (a token in the profile's global DB), sync on, cursor.com → the fake."""
    token = make_jwt(exp=now_ms() // 1000 + WEEK_S)
    write_global_db(server_env.db, token)
    fake.expected_cookie = cookie_for(token)
    server_env.env.pop("CODEBURN_CURSOR_SYNC")
    server_env.env["CODEBURN_CURSOR_BASE_URL"] = fake.url
    return server_env
