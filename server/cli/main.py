"""The `codeburn` command line: the same engine the editor uses (SPEC §11)."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from codeburn.server.cli.errors import UserError
from codeburn.server.names import PROVIDER_CHOICES
from codeburn.server.service import PERIODS, PeriodError, resolve_period


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UserError(self.prog, message)


def _common(parser: argparse.ArgumentParser, *, period: bool) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--cursor-db", metavar="PATH", help="Cursor's global state.vscdb")
    parser.add_argument("--no-sync", action="store_true", help="skip the cursor.com sync")
    if period:
        parser.add_argument("--period", choices=PERIODS, default=None)
        parser.add_argument("--from", dest="start", metavar="YYYY-MM-DD")
        parser.add_argument("--to", dest="end", metavar="YYYY-MM-DD")
        parser.add_argument("--provider", choices=PROVIDER_CHOICES, default="all")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="codeburn", description="What your AI coding in Cursor costs.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name, text in (
        ("report", "spend for a period (default: this month)"),
        ("today", "spend today"),
        ("month", "spend this month"),
    ):
        _common(sub.add_parser(name, help=text, prog=f"codeburn {name}"), period=True)
    status = sub.add_parser(
        "status", help="today and this month, for status bars", prog="codeburn status"
    )
    _common(status, period=False)
    status.add_argument("--quota", action="store_true", help="also read the plan quota")
    imp = sub.add_parser("import", help="import Cursor's usage export", prog="codeburn import")
    imp.add_argument("source", choices=("cursor",))
    imp.add_argument("file", nargs="?", type=Path)
    imp.add_argument("--from", dest="start", metavar="DATE|ISO|MS")
    imp.add_argument("--to", dest="end", metavar="DATE|ISO|MS")
    imp.add_argument("--user", metavar="EMAIL", help="whose rows of a team export to import")
    imp.add_argument("--remove", action="store_true", help="delete imported and synced usage")
    imp.add_argument("--sync", action="store_true", help="download the export from cursor.com now")
    imp.add_argument("--format", choices=("text", "json"), default="text")
    imp.add_argument("--cursor-db", metavar="PATH")
    serve = sub.add_parser("serve", help="run the language server", prog="codeburn serve")
    serve.add_argument("--tcp", metavar="HOST:PORT")
    demo = sub.add_parser(
        "demo", help="report on sample data (or your Cursor data)", prog="codeburn demo"
    )
    demo.add_argument(
        "--sample", action="store_true", help="use sample data even if Cursor is installed"
    )
    demo.add_argument("--cursor-db", metavar="PATH")
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


def _service(args: argparse.Namespace, progress: Any = None) -> Any:
    from codeburn.providers import resolve_db_path  # noqa: PLC0415
    from codeburn.server.service import UsageService  # noqa: PLC0415

    path = _usable_db_path(resolve_db_path(cli=args.cursor_db), _where(args))
    return UsageService(path, progress=progress)


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
        _print_json(report)
    else:
        from codeburn.server.cli.text import print_report  # noqa: PLC0415

        print_report(report)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from codeburn.cache import budget_from_config  # noqa: PLC0415
    from codeburn.server.cli.progress import terminal_progress  # noqa: PLC0415

    with terminal_progress() as progress:
        status = _service(args, progress).status(
            budget=budget_from_config(), quota=args.quota, sync=not args.no_sync
        )
    assert status is not None  # only a cached-only status can be None
    if args.format == "json":
        _print_json(status)
    else:
        from codeburn.server.cli.text import print_status  # noqa: PLC0415

        print_status(status)
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

    return run_demo(sample=args.sample, cursor_db=args.cursor_db)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "report": cmd_report,
    "today": cmd_report,
    "month": cmd_report,
    "status": cmd_status,
    "import": cmd_import,
    "serve": cmd_serve,
    "demo": cmd_demo,
}


class _PlainFormatter(logging.Formatter):
    """Log lines with paths and names in them, control characters escaped."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        from codeburn.server.service import plain  # noqa: PLC0415

        return plain(super().formatMessage(record))


def main(argv: Sequence[str] | None = None) -> int:
    from codeburn.server.log_filter import OwnRecordsOnly, debug_wanted  # noqa: PLC0415

    stderr = logging.StreamHandler(sys.stderr)
    stderr.addFilter(OwnRecordsOnly())  # never httpcore's headers (the session cookie)
    stderr.setFormatter(_PlainFormatter("codeburn: %(message)s"))
    level = logging.DEBUG if debug_wanted() else logging.ERROR
    logging.basicConfig(level=level, handlers=[stderr])
    _fit_stdout()
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            where = f"codeburn {args.command}" if args.command else "codeburn"
            raise UserError(where, f"unrecognized arguments: {' '.join(extra)}")
        if args.command is None:
            parser.print_help()
            return 0
        return COMMANDS[args.command](args)
    except UserError as exc:
        from codeburn.server.service import plain  # noqa: PLC0415

        # One line, whatever a file name, path or team `User` cell in the message holds.
        sys.stderr.write(f"{plain(exc.command)}: {plain(exc)}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
