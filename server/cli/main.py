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
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

from codeburn.server.cli.errors import UserError
from codeburn.server.names import PROVIDER_CHOICES
from codeburn.server.service import PERIODS, PeriodError, resolve_period


class UsageError(Exception):
    """A command line argparse cannot use: usage line, one-line reason, exit code 2."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return f"codeburn {version('codeburn')}"
    except PackageNotFoundError:
        return "codeburn (version unknown)"


class _VersionAction(argparse.Action):
    """`--version`, with the version looked up only when asked for: reading the package's
    metadata would slow every other command (once per subcommand's parser)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS,
            help="show the program's version number and exit",
        )  # fmt: skip

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> NoReturn:
        print(_version())
        parser.exit()


def _day(text: str) -> str:
    """A `--from`/`--to` value that is a date at all (usage error, exit 2, otherwise); whether
    it is inside 2000–2100 is the command's to say (exit 1)."""
    try:
        date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a date like 2026-11-30, got {text!r}") from None
    return text


def _common(parser: argparse.ArgumentParser, *, period: bool) -> None:
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for people (default) or the JSON of docs/report-json.md, e.g. --format json",
    )
    parser.add_argument(
        "--cursor-db",
        metavar="PATH",
        help="Cursor's global state.vscdb instead of the usual place (it must exist), e.g. "
        "--cursor-db ~/.config/Cursor/User/globalStorage/state.vscdb",
    )
    parser.add_argument(
        "--no-sync", action="store_true", help="do not sync from cursor.com first, e.g. --no-sync"
    )
    if period:
        parser.add_argument(
            "--period",
            choices=PERIODS,
            default=None,
            help="a named period (default: this month), e.g. --period 30days",
        )
        parser.add_argument(
            "--from",
            dest="start",
            metavar="YYYY-MM-DD",
            type=_day,
            help="first local day, inclusive (wins over --period), e.g. --from 2026-11-01",
        )
        parser.add_argument(
            "--to",
            dest="end",
            metavar="YYYY-MM-DD",
            type=_day,
            help="last local day, inclusive (default: today), e.g. --to 2026-11-30",
        )
        parser.add_argument(
            "--provider",
            choices=PROVIDER_CHOICES,
            default="all",
            help="only one provider's usage, e.g. --provider cursor-agent",
        )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also print the read's diagnostics (skipped rows, inferred dates), e.g. --verbose",
    )


def _add(sub: Any, name: str, text: str, examples: Sequence[str]) -> argparse.ArgumentParser:
    epilog = "examples:\n" + "\n".join(f"  codeburn {e}" for e in examples)
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=text, description=text, epilog=epilog, prog=f"codeburn {name}"
    )
    parser.add_argument("--version", action=_VersionAction)
    return parser


def _import_parser(sub: Any) -> None:
    imp = _add(
        sub,
        "import",
        "import Cursor's usage export (exact figures replace local estimates)",
        (
            "import cursor ~/Downloads/usage-events.csv",
            "import cursor usage.csv --from 2026-11-01 --to 2026-11-30",
            "import cursor --sync",
            "import cursor --remove",
        ),
    )
    imp.add_argument("source", choices=("cursor",), help="where the export comes from: cursor")
    imp.add_argument(
        "file", nargs="?", type=Path, help="the exported CSV file, e.g. usage-events.csv"
    )
    imp.add_argument(
        "--from",
        dest="start",
        metavar="DATE|ISO|MS",
        help="start of the range the file covers (default: its first event), e.g. "
        "--from 2026-11-01",
    )
    imp.add_argument(
        "--to",
        dest="end",
        metavar="DATE|ISO|MS",
        help="end of the range the file covers (default: its last event), e.g. --to 2026-11-30",
    )
    imp.add_argument(
        "--user",
        metavar="EMAIL",
        help="whose rows of a team export to import, e.g. --user me@example.com",
    )
    imp.add_argument(
        "--remove",
        action="store_true",
        help="delete imported and synced usage (local estimates come back), e.g. --remove",
    )
    imp.add_argument(
        "--sync", action="store_true", help="download the export from cursor.com now, e.g. --sync"
    )
    imp.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default) or the JSON summary, e.g. --format json",
    )
    imp.add_argument(
        "--cursor-db",
        metavar="PATH",
        help="Cursor's global state.vscdb (it must exist), e.g. --cursor-db ./state.vscdb",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="codeburn",
        description="What your AI coding in Cursor costs.",
        epilog="examples:\n  codeburn today\n  codeburn report --period 30days\n"
        "  codeburn status --format json\n  codeburn demo --sample",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name, text, examples in (
        (
            "report",
            "spend for a period (default: this month)",
            (
                "report --period 30days",
                "report --from 2026-11-01 --to 2026-11-15 --format json",
                "report --by conversation --period week",
            ),
        ),
        ("today", "spend today", ("today", "today --provider cursor --verbose")),
        ("month", "spend this month", ("month", "month --format json --no-sync")),
    ):
        command = _add(sub, name, text, examples)
        _common(command, period=True)
        if name == "report":
            command.add_argument(
                "--by",
                choices=("conversation",),
                default=None,
                help="one row per conversation (the top 50 by cost) instead of the usual "
                "tables, e.g. --by conversation",
            )
    status = _add(
        sub,
        "status",
        "today and this month, for status bars",
        ("status", "status --format json --quota"),
    )
    _common(status, period=False)
    status.add_argument(
        "--quota", action="store_true", help="also read the plan quota, e.g. --quota"
    )
    forecast = _add(
        sub,
        "forecast",
        "the billing cycle's projected cost, with a band",
        ("forecast", "forecast --format json --no-sync"),
    )
    _common(forecast, period=False)
    forecast.add_argument(
        "--quota", action="store_true", help="also read the plan quota (pools), e.g. --quota"
    )
    _import_parser(sub)
    serve = _add(
        sub,
        "serve",
        "run the language server (LSP over stdio)",
        ("serve", "serve --tcp 127.0.0.1:2087"),
    )
    serve.add_argument(
        "--tcp", metavar="HOST:PORT", help="listen on TCP instead, e.g. --tcp 127.0.0.1:2087"
    )
    demo = _add(
        sub,
        "demo",
        "report on sample data (or your Cursor data)",
        ("demo", "demo --sample"),
    )
    demo.add_argument(
        "--sample",
        action="store_true",
        help="use sample data even if Cursor is installed, e.g. --sample",
    )
    demo.add_argument(
        "--cursor-db",
        metavar="PATH",
        help="report on this state.vscdb (it must exist), e.g. --cursor-db ./state.vscdb",
    )
    return parser


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
