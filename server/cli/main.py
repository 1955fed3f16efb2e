"""The `codeburn` command line: the same engine the editor uses (docs/cli.md)."""

from __future__ import annotations

import argparse
import errno
import gc
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from codeburn.server.cli.args import UsageError, build_parser
from codeburn.server.cli.errors import UserError
from codeburn.server.service import PeriodError, resolve_period


def _where(args: argparse.Namespace) -> str:
    return "codeburn import cursor" if args.command == "import" else f"codeburn {args.command}"


def short_path(text: str, limit: int = 100) -> str:
    """`text`, or its start and end around `...` when longer than `limit` characters."""
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}...{text[-half:]} ({len(text):,} characters)"


def _usable_db_path(path: Path, where: str) -> Path:
    """`path` unless the system refuses to even look it up (a name too long for it)."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            reason = exc.strerror or "file name too long"
            raise UserError(
                where, f"cannot use the Cursor database {short_path(str(path))}: {reason}"
            ) from None
    return path


def explicit_db(args: argparse.Namespace) -> None:
    """An explicit `--cursor-db` that does not exist is a mistake to say (exit 1); the default
    place, `CODEBURN_CURSOR_DB` and the editor setting give `no-data` instead
    (docs/report-json.md#status)."""
    given = (args.cursor_db or "").strip()
    if not given:
        return
    path = _usable_db_path(Path(given).expanduser(), _where(args))
    if not os.path.lexists(path):  # a broken link or a loop is there: its state says why
        raise UserError(
            _where(args),
            f"--cursor-db {short_path(str(path))} does not exist; give the path of Cursor's "
            "global state.vscdb",
        )


def _service(args: argparse.Namespace, progress: Any = None) -> Any:
    from codeburn.providers import ONE_SHOT, resolve_db_path  # noqa: PLC0415
    from codeburn.server.service import UsageService  # noqa: PLC0415

    if args.command != "import":  # an import reads only the store (and the signed-in email)
        explicit_db(args)
    path = _usable_db_path(resolve_db_path(cli=args.cursor_db), _where(args))
    # One command, one read: nothing is kept for a refresh (a lower peak; see LocalReader).
    return UsageService(path, progress=progress, plan=ONE_SHOT)


def stdout_is_utf8() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or ""
    return encoding.lower().replace("_", "-") in ("utf-8", "utf8", "utf-8-sig")


def _fit_stdout() -> None:
    """On a stdout that cannot write every character (cp1252, ascii), text shows `?` for what
    it cannot write instead of failing; UTF-8 output is left as it is."""
    if not stdout_is_utf8() and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")


def _print_json(obj: Any) -> None:
    from codeburn.server.service import dumps  # noqa: PLC0415

    # ASCII-safe (\u escapes, the same JSON) where stdout cannot write UTF-8.
    sys.stdout.write(dumps(obj, indent=2, ensure_ascii=not stdout_is_utf8()) + "\n")


def cmd_report(args: argparse.Namespace) -> int:
    from codeburn.providers import today  # noqa: PLC0415
    from codeburn.server.cli.progress import terminal_progress  # noqa: PLC0415

    name = {"today": "today", "month": "month"}.get(args.command, args.period)
    try:
        period = resolve_period(name, args.start, args.end, today())
    except PeriodError as exc:
        raise UserError(f"codeburn {args.command}", str(exc)) from None
    with terminal_progress() as progress:
        report = _service(args, progress).report(
            period, provider=args.provider, sync=not args.no_sync
        )
    if args.format == "json":
        _print_json(report)  # the same JSON: its `conversations` are what --by lists
    elif getattr(args, "by", None) == "conversation":
        from codeburn.server.cli.text import print_conversations  # noqa: PLC0415

        print_conversations(report, verbose=args.verbose)
    else:
        from codeburn.server.cli.text import print_report  # noqa: PLC0415

        print_report(report, verbose=args.verbose)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from codeburn.cache import budget_from_config  # noqa: PLC0415
    from codeburn.server.cli.lines import styled_stream, write_status  # noqa: PLC0415
    from codeburn.server.cli.progress import terminal_progress  # noqa: PLC0415

    with terminal_progress() as progress:
        status = _service(args, progress).status(
            budget=budget_from_config(), quota=args.quota, sync=not args.no_sync
        )
    assert status is not None  # only a cached-only status can be None
    if args.format == "json":
        _print_json(status)
    elif not styled_stream(sys.stdout):
        write_status(status, sys.stdout, verbose=args.verbose)  # a pipe: no Rich to import
    else:
        from codeburn.server.cli.text import print_status  # noqa: PLC0415

        print_status(status, verbose=args.verbose)
    return 0


def cmd_forecast(args: argparse.Namespace) -> int:
    """The status object's `forecast` (docs/forecast.md): JSON (null before there is one) or
    lines for a person."""
    from codeburn.cache import budget_from_config  # noqa: PLC0415
    from codeburn.server.service import forecast_lines  # noqa: PLC0415

    status = _service(args).status(
        budget=budget_from_config(), quota=args.quota, sync=not args.no_sync
    )
    assert status is not None  # only a cached-only status can be None
    if args.format == "json":
        _print_json(status["forecast"])
        return 0
    cycle = status["cycle"]
    print(f"Billing cycle {cycle['start']} – {cycle['end']} ({cycle['source']})")
    for line in forecast_lines(status["forecast"]):
        print(line)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from codeburn.server.cli.imports import run_import  # noqa: PLC0415

    return run_import(args, _service(args))


def cmd_serve(args: argparse.Namespace) -> int:
    from codeburn.server.lsp import serve  # noqa: PLC0415

    serve(args.tcp)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from codeburn.server.cli.demo import run_demo  # noqa: PLC0415

    explicit_db(args)
    return run_demo(sample=args.sample, cursor_db=args.cursor_db)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "report": cmd_report,
    "today": cmd_report,
    "month": cmd_report,
    "status": cmd_status,
    "forecast": cmd_forecast,
    "import": cmd_import,
    "serve": cmd_serve,
    "demo": cmd_demo,
}


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The parser of `command` (for its usage line), else the top one."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            chosen: argparse.ArgumentParser = action.choices[command]
            return chosen
    return parser


class _PlainFormatter(logging.Formatter):
    """Log lines with paths and names in them, control characters escaped."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        from codeburn.server.service import plain  # noqa: PLC0415

        return plain(super().formatMessage(record))


def main(argv: Sequence[str] | None = None, *, ends_process: bool = False) -> int:
    """The command line's exit code. `ends_process`: the caller ends the process next without
    freeing anything (`run`), so what the command built is kept to the end."""
    from codeburn.server.log_filter import OwnRecordsOnly, debug_wanted  # noqa: PLC0415

    stderr = logging.StreamHandler(sys.stderr)
    stderr.addFilter(OwnRecordsOnly())  # never httpcore's headers (the session cookie)
    stderr.setFormatter(_PlainFormatter("codeburn: %(message)s"))
    level = logging.DEBUG if debug_wanted() else logging.ERROR
    logging.basicConfig(level=level, handlers=[stderr])
    _fit_stdout()
    parser = build_parser()
    try:
        try:
            args, extra = parser.parse_known_args(argv)
        except SystemExit as done:  # --help, --version
            return done.code if isinstance(done.code, int) else 0
        if extra:
            raise UsageError(
                _subparser(parser, args.command), f"unrecognized arguments: {' '.join(extra)}"
            )
        if args.command is None:
            parser.print_help()
            return 0
        if ends_process and args.command != "serve":
            # No cyclic GC in a command that ends here: re-enabled after reading the caches,
            # its first collection walks every object they hold to find nothing.
            gc.disable()
        from codeburn.providers import writes_at_end  # noqa: PLC0415

        # cache files written once the command's output is out, before it returns
        with writes_at_end(keep=ends_process):
            return COMMANDS[args.command](args)
    except UsageError as exc:
        from codeburn.server.service import plain  # noqa: PLC0415

        exc.parser.print_usage(sys.stderr)
        sys.stderr.write(f"{exc.parser.prog}: error: {plain(exc)}\n")
        return 2
    except UserError as exc:
        from codeburn.server.service import plain  # noqa: PLC0415

        # One line, whatever a file name, path or team `User` cell in the message holds.
        sys.stderr.write(f"{plain(exc.command)}: {plain(exc)}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def run() -> NoReturn:
    """The `codeburn` process: `main`, then an end that frees nothing (`os._exit` once stdout
    and stderr are flushed; the command's cache files are written by then, see `main`). Freeing
    a cold report's calls and the interpreter's own teardown is time the user waits for and
    nothing needs. With a thread still running, the usual end (which waits for it)."""
    code = main(ends_process=True)
    if threading.active_count() > 1:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # (a reader that went away: as in `main`)
            pass
        except (OSError, ValueError):  # (what Python's own end does when it cannot flush)
            code = code or 120
    os._exit(code)


if __name__ == "__main__":
    run()
