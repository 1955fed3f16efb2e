"""`workspace/executeCommand` handlers (docs/lsp.md#commands): arguments, the work, errors a
person can act on.

Every handler takes `*args` so that `arguments: []` (what the editor sends) is accepted; the
first argument, when present, is an options object (or, as a shorthand, a string).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Awaitable, Callable, Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from codeburn.cache import FolderUnusableError, cursor_sync_env_off, load_config, set_config_value
from codeburn.providers import ChooseUserError, CodeBurnError, today
from codeburn.server.names import (
    IMPORT_CSV,
    PROVIDER_CHOICES,
    REFRESH,
    REMOVE_IMPORT,
    REPORT,
    SET_CURSOR_SYNC,
    SYNC_CURSOR,
)
from codeburn.server.service import PeriodError, plain, resolve_period

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from codeburn.server.service import UsageService

log = logging.getLogger(__name__)
T = TypeVar("T")


class UserFacingError(JsonRpcException):
    """An error whose message is meant for a person (no traceback, no secret)."""


class CommandFailed(UserFacingError):
    """The command was valid but could not be done (LSP `RequestFailed`)."""

    CODE = types.LSPErrorCodes.RequestFailed.value


class InvalidArguments(UserFacingError, JsonRpcInvalidParams):
    """The arguments do not fit the command."""

    CODE = JsonRpcInvalidParams.CODE


class CommandHost(Protocol):
    """What the handlers need from the server (pygls evaluates handler annotations at run time)."""

    async def blocking(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T: ...

    async def run_job(
        self,
        key: Hashable,
        title: str | None,
        work: Callable[[UsageService], dict[str, Any]],
        *,
        changes_data: bool,
    ) -> dict[str, Any]: ...

    async def refresh_now(self) -> dict[str, Any]: ...

    def after_change(self, *, sync: bool = False) -> None: ...


def _first_line(text: str) -> str:
    """The first line, control characters escaped (a file name or `User` cell may hold them)."""
    return plain(text.strip().split("\n", 1)[0])  # not splitlines(): it splits at \x1c too


def command_error(exc: BaseException, what: str) -> JsonRpcException:
    """Any failure of a command → a JSON-RPC error with one actionable line."""
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, CodeBurnError):
        return CommandFailed(_first_line(str(exc)))
    if isinstance(exc, FolderUnusableError):
        return CommandFailed(f"{what} failed, nothing was stored: {exc.strerror}")
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        return CommandFailed(plain(f"{what} failed: cannot access{where}: {exc.strerror or exc}"))
    log.error("%s failed unexpectedly", what, exc_info=exc)
    detail = _first_line(str(exc)) or type(exc).__name__
    return CommandFailed(f"{what} failed unexpectedly ({detail}); see the CodeBurn log")


def options(command: str, args: tuple[Any, ...], shorthand: str | None = None) -> dict[str, Any]:
    """The options object of `arguments: [{...}]`; `[]` and `[null]` mean no options."""
    if not args or (len(args) == 1 and args[0] is None):
        return {}
    first = args[0]
    if len(args) == 1 and shorthand is not None and isinstance(first, str):
        return {shorthand: first}
    if len(args) > 1 or not isinstance(first, Mapping):
        raise InvalidArguments(f"{command} takes one options object, e.g. [{{...}}]")
    return dict(first)


def text_option(opts: dict[str, Any], key: str, command: str) -> str | None:
    value = opts.get(key)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and key in ("from", "to"):
        if isinstance(value, float) and not math.isfinite(value):  # 1e400 and NaN parse so
            raise InvalidArguments(
                f'{command}: "{key}" must be a date (YYYY-MM-DD), an ISO time or epoch '
                f"milliseconds, not {value}"
            )
        return str(int(value))  # epoch milliseconds, as in the export URL
    if not isinstance(value, str) or not value.strip():
        raise InvalidArguments(f'{command}: "{key}" must be a non-empty string')
    return value.strip()


def csv_path(value: str) -> Path:
    """A file path or a `file://` URI; InvalidArguments for one no file can have."""
    path: Path | None = None
    if value.startswith("file:"):
        converted = to_fs_path(value)
        if converted:
            path = Path(converted)
    if path is None:
        try:
            path = Path(value).expanduser()
        except RuntimeError:  # ~name of no user on this machine
            user = value[1:].split("/", 1)[0]
            raise InvalidArguments(
                f'{IMPORT_CSV}: "path" starts with ~{user}, but there is no user named {user}'
            ) from None
    text = str(path)
    if "\0" in text:
        raise InvalidArguments(f'{IMPORT_CSV}: "path" holds a NUL character; no file name can')
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        raise InvalidArguments(
            f'{IMPORT_CSV}: "path" holds a character no file name can (a lone UTF-16 surrogate)'
        ) from None
    return path


async def import_cursor_csv(ls: CommandHost, *args: Any) -> dict[str, Any]:
    """[{"path", "from"?, "to"?, "user"?}] → the import summary (docs/import.md#summary), or
    `{"chooseUser": [...]}` when a team export holds several people and the signed-in one is not
    among them."""
    opts = options(IMPORT_CSV, args, shorthand="path")
    raw = text_option(opts, "path", IMPORT_CSV)
    if raw is None:
        raise InvalidArguments(
            f'{IMPORT_CSV} needs the exported file: [{{"path": "/path/to/usage-events.csv"}}]'
        )
    path = csv_path(raw)
    start, end = text_option(opts, "from", IMPORT_CSV), text_option(opts, "to", IMPORT_CSV)
    user = text_option(opts, "user", IMPORT_CSV)

    def work(service: UsageService) -> dict[str, Any]:
        try:
            return service.import_csv(path, start=start, end=end, user=user)
        except ChooseUserError as exc:
            # Not an error: the editor asks which person's rows to import, then calls again.
            return {"changed": False, "chooseUser": list(exc.users)}

    return await ls.run_job(
        ("import", str(path), start, end, user),
        f"Importing {plain(path.name)}",
        work,
        changes_data=True,
    )


async def remove_cursor_import(ls: CommandHost, *args: Any) -> dict[str, Any]:
    """→ {"removed", "ranges"}."""
    return await ls.run_job(
        ("remove",),
        "Removing imported Cursor usage",
        lambda service: service.remove_import(),
        changes_data=True,
    )


async def sync_cursor(ls: CommandHost, *args: Any) -> dict[str, Any]:
    """→ the sync summary; an error names the cause (login, network, export)."""
    return await ls.run_job(
        ("sync",),
        "Syncing Cursor usage from cursor.com",
        lambda service: service.sync_now(),
        changes_data=True,
    )


async def refresh(ls: CommandHost, *args: Any) -> dict[str, Any]:
    """→ the status object (after an automatic sync when one is due)."""
    return await ls.refresh_now()


async def report(ls: CommandHost, *args: Any) -> dict[str, Any]:
    """[{"period"?, "from"?, "to"?, "provider"?}] → the report object (docs/report-json.md)."""
    opts = options(REPORT, args, shorthand="period")
    name = text_option(opts, "period", REPORT)
    start, end = text_option(opts, "from", REPORT), text_option(opts, "to", REPORT)
    provider = text_option(opts, "provider", REPORT) or "all"
    if provider not in PROVIDER_CHOICES:
        raise InvalidArguments(f'{REPORT}: "provider" must be one of {", ".join(PROVIDER_CHOICES)}')
    try:
        period = resolve_period(name, start, end, today())
    except PeriodError as exc:
        message = str(exc).replace("--from", '"from"').replace("--to", '"to"')
        raise InvalidArguments(f"{REPORT}: {message}") from None
    return await ls.run_job(
        ("report", period.label, period.start, period.end, provider),
        None,
        lambda service: service.report(period, provider=provider, sync=False),
        changes_data=False,
    )


async def set_cursor_sync(ls: CommandHost, *args: Any) -> dict[str, Any]:
    """[{"enabled": bool}] → writes `cursorSync` in config.json; [] only reads it."""
    opts = options(SET_CURSOR_SYNC, args)
    enabled = opts.get("enabled")
    if enabled is None:
        current = await ls.blocking(load_config)
        return {
            "enabled": current.get("cursorSync", True) is not False,
            "disabledByEnv": cursor_sync_env_off(),
        }
    if not isinstance(enabled, bool):
        raise InvalidArguments(f'{SET_CURSOR_SYNC}: "enabled" must be true or false')
    try:
        await ls.blocking(set_config_value, "cursorSync", enabled)
    except Exception as exc:
        raise command_error(exc, "Turning cursor.com sync on or off") from None
    ls.after_change(sync=enabled)
    return {"enabled": enabled, "disabledByEnv": cursor_sync_env_off()}


HANDLERS: Final[dict[str, Callable[..., Awaitable[dict[str, Any]]]]] = {
    IMPORT_CSV: import_cursor_csv,
    REMOVE_IMPORT: remove_cursor_import,
    SYNC_CURSOR: sync_cursor,
    REFRESH: refresh,
    REPORT: report,
    SET_CURSOR_SYNC: set_cursor_sync,
}
"""Every command the server offers (names.COMMANDS, which `capabilities()` advertises)."""


def register_commands(server: LanguageServer) -> None:
    """Attach every docs/lsp.md#commands command to `server`."""
    for name, handler in HANDLERS.items():
        server.command(name)(handler)
