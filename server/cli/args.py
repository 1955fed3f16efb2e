"""The `codeburn` command line's arguments: commands, options, their help (docs/cli.md)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

from codeburn.server.names import PROVIDER_CHOICES
from codeburn.server.service import PERIODS


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
