"""The CodeBurn language server (pygls 2.x): `codeburn/status` notifications and commands.

docs/lsp.md. One long-lived `UsageService` per database; every blocking call runs on a worker
thread.
Startup: settings → cached figures at once → the real read → a cursor.com pass → a timer that
re-reads only when the database, WAL, workspaces or import store changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path as uris_to_path

from codeburn.cache import cursor_sync_enabled, set_config_value
from codeburn.providers import (
    canonical,
    now_ms,
    resolve_db_path,
    today,
    tool_log_folders,
)
from codeburn.server import VERSION
from codeburn.server.lsp.commands import command_error
from codeburn.server.lsp.progress import ParseProgress, WorkProgress
from codeburn.server.lsp.protocol import CheckedProtocol
from codeburn.server.lsp.settings import SECTION, Settings, changed_settings, parse_settings
from codeburn.server.lsp.status import (
    AlertNotices,
    ToolNotices,
    failed_status,
    payload_key,
    with_env,
)
from codeburn.server.names import STATUS_METHOD
from codeburn.server.service import UsageService, combined_message

log = logging.getLogger(__name__)

CONFIG_TIMEOUT_S: Final = 10.0
READY_TIMEOUT_S: Final = 15.0
RETRY_STATES: Final = frozenset({"db-locked", "error"})
T = TypeVar("T")


class CodeBurnServer(LanguageServer):
    """Holds the usage service, the last status sent, and the background work."""

    def __init__(self) -> None:
        super().__init__(
            "codeburn",
            VERSION,
            text_document_sync_kind=types.TextDocumentSyncKind.None_,
            protocol_cls=CheckedProtocol,
        )
        self.settings = Settings()
        self.init_options: Any = None
        self.service: UsageService | None = None
        self.parse_progress = ParseProgress(self)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.shut_down = False
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="codeburn")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inflight: dict[Hashable, asyncio.Task[Any]] = {}
        self._ready = asyncio.Event()
        self._wake = asyncio.Event()
        self._settings_lock = asyncio.Lock()
        self._settings_applied = False
        self._refresh_task: asyncio.Task[tuple[int, dict[str, Any]]] | None = None
        self._wanted = 0
        self._last_key: str | None = None
        self._logged_diagnostics: list[str] = []
        self.last_status: dict[str, Any] | None = None
        self._real_sent = False
        self._seen_fp: str | None = None
        self._seen_day = today()
        self._quota: dict[str, Any] | None = None
        self._notices = AlertNotices()
        self._tools = ToolNotices()
        # The editor watches the other tools' logs for us (registered), and has reported a
        # change (delivers): only then does a read look at the reported logs alone.
        self.logs_watch_registered = False
        self.logs_watch_delivers = False

    # -- plumbing ---------------------------------------------------------------------------

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Failures outside a request go to the log (docs/lsp.md), never to `window/showMessage`."""
        if source is FeatureRequestError:
            return  # the request's error reply says it
        unparsable = isinstance(error, ValueError | RecursionError)
        if unparsable and isinstance(self.protocol, CheckedProtocol):
            self.protocol.reject_unparsable(error)  # json.loads failed on a message body
        else:
            log.error("server error: %s", error)

    async def blocking(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run `fn` on a worker thread (never on the message loop); after shutdown, cancelled."""
        if self.shut_down:  # the pool is gone: the work is cancelled, it did not fail
            raise asyncio.CancelledError
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """A background task that is kept referenced and whose failure is logged."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("background task failed: %s", exc, exc_info=exc)

    async def join(self, key: Hashable, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Start `work`, or join the same work already in flight."""
        task = self._inflight.get(key)
        if task is None or task.done():
            task = asyncio.ensure_future(work())
            self._inflight[key] = task
            task.add_done_callback(functools.partial(self._inflight_done, key))
        result: T = await asyncio.shield(task)
        return result

    def _inflight_done(self, key: Hashable, task: asyncio.Task[Any]) -> None:
        if self._inflight.get(key) is task:
            del self._inflight[key]
        if not task.cancelled():
            task.exception()  # retrieved: every waiter got it already

    def client_caps(self) -> types.ClientCapabilities:
        """The client's capabilities; none (the defaults) when no `initialize` was taken: a
        client may send `initialized` after its `initialize` was refused (-32602)."""
        caps = getattr(self.protocol, "client_capabilities", None)
        return caps if isinstance(caps, types.ClientCapabilities) else types.ClientCapabilities()

    def supports_progress(self) -> bool:
        window = self.client_caps().window
        return bool(window and window.work_done_progress)

    async def wait_ready(self) -> None:
        """Until the first settings pull is done (bounded: a silent client must not hang us)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), READY_TIMEOUT_S)

    def current_service(self) -> UsageService:
        if self.service is None:
            self.service = self._new_service(resolve_db_path())
        return self.service

    def _new_service(self, db: Any) -> UsageService:
        service = UsageService(db, progress=self.parse_progress)
        service.watch_tool_logs(self.logs_watch_delivers)
        return service

    # -- settings ---------------------------------------------------------------------------

    async def pull_settings(self) -> None:
        """`workspace/configuration` (section codeburn) over `initializationOptions`."""
        async with self._settings_lock:
            pulled: Any = None
            workspace = self.client_caps().workspace
            if workspace is not None and workspace.configuration:
                params = types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                try:
                    answer = await asyncio.wait_for(
                        self.workspace_configuration_async(params), CONFIG_TIMEOUT_S
                    )
                    pulled = answer[0] if answer else None
                except Exception as exc:
                    log.warning("could not read the %s settings from the editor: %s", SECTION, exc)
            settings, warnings = parse_settings(self.init_options, pulled)
            for warning in warnings:
                log.warning(warning)
            await self._apply(settings)

    async def _apply(self, settings: Settings) -> None:
        old, self.settings = self.settings, settings
        first, self._settings_applied = not self._settings_applied, True
        db = canonical(resolve_db_path(setting=settings.cursor_database_path or None))
        if self.service is None or self.service.db_path != db:
            self.service = self._new_service(db)
            self._seen_fp = None
            log.info("reading Cursor data from %s", db)
        if first:
            return  # start-up: the editor's defaults must not overwrite a choice made in the CLI
        if old.cursor_sync_enabled != settings.cursor_sync_enabled:
            await self.blocking(set_config_value, "cursorSync", settings.cursor_sync_enabled)
        changed = changed_settings(old, settings)
        if changed:
            log.info("settings changed: %s", ", ".join(changed))
        if old.refresh_interval_seconds != settings.refresh_interval_seconds:
            self._wake.set()

    async def settings_changed(self) -> None:
        await self.wait_ready()
        await self.pull_settings()
        self.after_change(sync=True)

    # -- status -----------------------------------------------------------------------------

    def seed(self, payload: dict[str, Any]) -> None:
        """The cached status the handshake already sent: not sent again unless it changes."""
        self._last_key = payload_key(payload)
        self.last_status = payload

    def publish(self, status: dict[str, Any], *, real: bool = True) -> dict[str, Any]:
        """Send `codeburn/status` unless it equals the last one (ignoring `generatedAt`)."""
        payload = with_env(status)
        first_real = real and not self._real_sent
        if real:
            self._real_sent = True
        elif self._real_sent:
            return payload  # cached figures never overwrite real ones
        key = payload_key(payload)
        changed = key != self._last_key
        if changed:
            self._last_key = key
            self.last_status = payload
            self.protocol.notify(STATUS_METHOD, payload)
        # The first full read alerts even when it equals the cached figures sent before it:
        # those never alert (docs/forecast.md, "Alerts").
        if real and (changed or first_real):
            self._log_diagnostics(payload)
            self.spawn(self._alert_messages(payload))
            self.spawn(self._tool_messages(payload))
        return payload

    def _log_diagnostics(self, status: dict[str, Any]) -> None:
        """Facts of the local read (skipped rows, inferred dates) go to the log, once each time
        they change; they are not warnings for the status item (docs/cli.md)."""
        notes = [str(n) for n in status.get("diagnostics") or []]
        if notes != self._logged_diagnostics:
            self._logged_diagnostics = notes
            for note in notes:
                log.info("local read: %s", note)

    async def _alert_messages(self, status: dict[str, Any]) -> None:
        """The alerts not shown yet in any window, as one message at the level of the worst.
        Only full reads come here (never cached figures); `alerts.enabled` off leaves the
        budget crossings."""
        alerts = [a for a in status.get("alerts") or [] if isinstance(a, dict)]
        if not self.settings.alerts_enabled:
            alerts = [a for a in alerts if str(a.get("id", "")).startswith("budget-")]
        due = await self.blocking(self._notices.due, alerts, now_ms())
        if not due:
            return
        level, text = combined_message(due)
        kind = {"error": types.MessageType.Error, "warning": types.MessageType.Warning}.get(
            level, types.MessageType.Info
        )
        self.window_show_message(types.ShowMessageParams(type=kind, message=text))

    async def _tool_messages(self, status: dict[str, Any]) -> None:
        for text in await self.blocking(self._tools.due, status):
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Info, message=text)
            )

    async def refresh(self, *, fresh: bool) -> dict[str, Any]:
        """Read and publish the status; `fresh` asks for a read that starts after this call.

        Without `fresh`, a refresh already in flight is joined; with it, callers that arrive
        while one runs share a single follow-up read.
        """
        if fresh or self._refresh_task is None or self._refresh_task.done():
            self._wanted += 1
        target = self._wanted
        while True:
            if self._refresh_task is None or self._refresh_task.done():
                self._refresh_task = asyncio.ensure_future(self._read_status(self._wanted))
            done_for, payload = await asyncio.shield(self._refresh_task)
            if done_for >= target:
                return payload

    async def _read_status(self, generation: int) -> tuple[int, dict[str, Any]]:
        service, settings = self.current_service(), self.settings
        day = today()
        try:
            fingerprint = await self.blocking(service.fingerprint)
            answer = await self.blocking(service.status, **self._status_options(settings))
            if answer is None:  # only a cached-only read may come back empty
                raise RuntimeError("no figures")
            status = answer
        except Exception as exc:
            log.error("reading usage failed: %s", exc, exc_info=exc)
            message = f"CodeBurn could not read usage: {exc}"
            status = failed_status(self.last_status, message, today=day, budget=settings.budget())
            fingerprint = None
        finally:
            await self.parse_progress.finish()
        if service is self.service:
            self._seen_fp, self._seen_day = fingerprint, day
        status["quota"] = self._quota
        return generation, self.publish(status)

    def _status_options(self, settings: Settings) -> dict[str, Any]:
        """What the settings and the last quota read give `UsageService.status`."""
        return {
            "budget": settings.budget(),
            "sync": False,
            "budget_period": settings.status_bar_period,
            "known_quota": self._quota,
            "included_percent": settings.alerts_included_percent,
            "providers": settings.counted(),
        }

    async def first_status(self) -> None:
        """Cached figures at once (no parse, no network), then the real read."""
        service = self.current_service()
        try:
            cached = await self.blocking(
                service.status, **self._status_options(self.settings), cached_only=True
            )
        except Exception as exc:
            log.warning("cached figures unavailable: %s", exc)
            cached = None
        if cached is not None:
            self.publish({**cached, "quota": self._quota}, real=False)
        await self.refresh(fresh=True)

    # -- cursor.com and the timer -----------------------------------------------------------

    async def _cursor_pass(self) -> bool:
        """Automatic sync when due, then the plan quota (cached 5 min); True if either changed."""
        service = self.current_service()
        before = await self.blocking(service.fingerprint)
        interval_ms = self.settings.cursor_sync_interval_minutes * 60_000
        await self.blocking(service.sync_if_due, interval_ms)
        quota = await self.blocking(service.quota) if cursor_sync_enabled() else None
        changed = quota != self._quota
        self._quota = quota
        return changed or before != await self.blocking(service.fingerprint)

    async def cursor_then_refresh(self) -> None:
        if await self.join("cursor.com", self._cursor_pass):
            await self.refresh(fresh=True)

    async def refresh_now(self) -> dict[str, Any]:
        """The refresh command: a due sync first, then figures read after the command came.

        A read in flight (the timer's, the first status's) may have begun before what the user
        wants to see was written: the command shares the read that follows it instead (one
        for every caller meanwhile)."""
        await self.wait_ready()
        try:
            await self.join("cursor.com", self._cursor_pass)
        except Exception as exc:  # never fails the command: the status says what is wrong
            log.warning("cursor.com pass failed: %s", exc)
        self.current_service().tool_logs_changed(None)  # (what the user wants: all of it)
        return await self.refresh(fresh=True)

    def after_change(self, *, sync: bool = False) -> None:
        """Data or settings changed: publish fresh figures (and let a due sync run)."""
        self.spawn(self.refresh(fresh=True))
        if sync:
            self.spawn(self.cursor_then_refresh())

    async def tick(self) -> None:
        """One timer step: re-read only when something that feeds the figures changed."""
        if "cursor.com" not in self._inflight:
            self.spawn(self.cursor_then_refresh())
        service = self.current_service()
        fingerprint = await self.blocking(service.fingerprint)
        state = (self.last_status or {}).get("state")
        if fingerprint != self._seen_fp or today() != self._seen_day or state in RETRY_STATES:
            await self.refresh(fresh=True)

    async def poll(self) -> None:
        self._wake.clear()  # settings applied before the timer started need no extra tick
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.refresh_interval_seconds)
            self._wake.clear()
            try:
                await self.tick()
            except Exception as exc:
                log.error("background refresh failed: %s", exc, exc_info=exc)

    async def start(self) -> None:
        """After `initialized`: settings, first figures, then the timer."""
        try:
            await self.pull_settings()
        finally:
            self._ready.set()
        self.spawn(self._watch_settings())
        self.spawn(self._watch_tool_logs())
        await self.first_status()
        self.spawn(self.cursor_then_refresh())
        self.spawn(self.poll())

    async def _watch_settings(self) -> None:
        """Ask the client for `workspace/didChangeConfiguration` (pull-model clients need it)."""
        workspace = self.client_caps().workspace
        change = workspace.did_change_configuration if workspace else None
        if not (change and change.dynamic_registration):
            return
        registration = types.Registration(
            id="codeburn-settings",
            method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            register_options={"section": SECTION},
        )
        try:
            await self.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        except Exception as exc:
            log.debug("settings-change registration refused: %s", exc)

    async def _watch_tool_logs(self) -> None:
        """Ask the client to report changes to the other tools' logs (docs/lsp.md#file-watch):
        a refresh then looks again at the logs reported, not at every log."""
        workspace = self.client_caps().workspace
        watched = workspace.did_change_watched_files if workspace else None
        if not (watched and watched.dynamic_registration and watched.relative_pattern_support):
            return
        watchers = [
            types.FileSystemWatcher(
                glob_pattern=types.RelativePattern(base_uri=folder.as_uri(), pattern="**")
            )
            for folder in tool_log_folders()
        ]
        registration = types.Registration(
            id="codeburn-tool-logs",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            await asyncio.wait_for(
                self.client_register_capability_async(
                    types.RegistrationParams(registrations=[registration])
                ),
                CONFIG_TIMEOUT_S,
            )
        except Exception as exc:
            log.debug("file-watch registration refused: %s", exc)
            return
        self.logs_watch_registered = True
        log.info("the editor watches the other tools' logs (%d folders)", len(watchers))

    def tool_logs_changed(self, uris: list[str]) -> None:
        """`workspace/didChangeWatchedFiles`: the logs the client saw change. Its first report
        shows that the editor's watch delivers: from then on a read looks at the reported logs
        only (until then, and where it never reports, every read lists every log)."""
        if not self.logs_watch_registered:
            return
        service = self.current_service()
        if not self.logs_watch_delivers:
            self.logs_watch_delivers = True
            service.watch_tool_logs(True)  # (the next read lists every log once)
            log.info("the editor reports changes to the other tools' logs: reads look at those")
        service.tool_logs_changed(p for u in uris if (p := uris_to_path(u)) is not None)

    # -- commands ---------------------------------------------------------------------------

    async def run_job(
        self,
        key: Hashable,
        title: str | None,
        work: Callable[[UsageService], dict[str, Any]],
        *,
        changes_data: bool,
    ) -> dict[str, Any]:
        """A command's blocking work: joined when the same is in flight, with `$/progress`."""
        await self.wait_ready()

        async def job() -> dict[str, Any]:
            progress = WorkProgress(self, title) if title and self.supports_progress() else None
            if progress is not None:
                progress.start()
            try:
                return await self.blocking(work, self.current_service())
            except Exception as exc:
                raise command_error(exc, title or "The command") from None
            finally:
                await self.parse_progress.finish()
                if progress is not None:
                    await progress.end()
                if changes_data:
                    self.after_change()

        return await self.join(key, job)

    def stop_background(self) -> None:
        for task in list(self._tasks) + list(self._inflight.values()):
            task.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
