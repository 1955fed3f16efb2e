"""`codeburn import cursor FILE | --sync | --remove`: the store, for people."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from codeburn.cache import CoverageError, FolderUnusableError, ImportStoreError, LockTimeoutError
from codeburn.providers import PROVIDER_NAMES, CsvFormatError, parse_iso_ms
from codeburn.server.cli.errors import UserError
from codeburn.server.cli.lines import counted
from codeburn.server.service import dumps, plain

if TYPE_CHECKING:
    from codeburn.server.service import UsageService

COMMAND = "codeburn import cursor"


def _local(iso: str | None) -> str:
    ms = parse_iso_ms(iso) if iso else None
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def _ranges(count: int) -> str:
    return "1 range" if count == 1 else f"{count} ranges"


def summary_text(summary: dict[str, Any], what: str) -> str:
    coverage = summary.get("coverage") or {}
    lines = [
        f"{what}: {counted(summary['added'], 'new event')}, {summary['skipped']:,} already "
        f"imported; {summary['total']:,} stored in total."
    ]
    if coverage.get("start"):
        how = ", inferred from the first and last event" if coverage.get("inferred") else ""
        lines.append(
            f"Coverage: {_local(coverage['start'])} – {_local(coverage['end'])} local time{how}."
        )
    window = summary.get("window")
    if window:
        lines.append(f"Window asked for: {_local(window['start'])} – {_local(window['end'])}.")
    lines.append(f"Tokens in this {'sync' if window else 'file'}: {summary['tokens']:,}.")
    if summary.get("userApiKey"):
        lines.append(
            f"{counted(summary['userApiKey'], 'row')} billed to your own API key: "
            "listed apart, not counted as Cursor spend."
        )
    if summary.get("future"):
        verb = "was" if summary["future"] == 1 else "were"
        lines.append(f"{counted(summary['future'], 'row')} dated after tomorrow {verb} refused.")
    replaced = [PROVIDER_NAMES.get(p, p) for p in summary.get("replaced", [])]
    if replaced:
        lines.append(f"Exact figures replace local estimates of: {', '.join(replaced)}.")
    lines.append("Nothing was uploaded.")
    return "\n".join(lines)


def _emit(args: argparse.Namespace, obj: dict[str, Any], text: str) -> None:
    if args.format == "json":
        sys.stdout.write(dumps(obj, indent=2) + "\n")
    else:
        sys.stdout.write(text + "\n")


def run_import(args: argparse.Namespace, service: UsageService) -> int:
    try:
        if args.remove:
            result = service.remove_import()
            text = (
                f"Removed imported and synced Cursor usage ({_ranges(len(result['ranges']))}); "
                "local estimates are shown again."
                if result["removed"]
                else "Nothing to remove: no Cursor usage has been imported."
            )
            _emit(args, result, text)
        elif args.sync:
            from codeburn.sync import SyncError  # noqa: PLC0415

            try:
                summary = service.sync_now()
            except SyncError as exc:
                raise UserError(COMMAND, str(exc)) from None
            _emit(args, summary, summary_text(summary, "Synced from cursor.com"))
        elif args.file is not None:
            summary = service.import_csv(args.file, start=args.start, end=args.end, user=args.user)
            _emit(args, summary, summary_text(summary, f"Imported {plain(args.file.name)}"))
        else:
            raise UserError(COMMAND, "give the exported CSV file, --sync or --remove")
    except (CsvFormatError, CoverageError, ImportStoreError, LockTimeoutError) as exc:
        raise UserError(COMMAND, str(exc)) from None
    except FolderUnusableError as exc:
        raise UserError(COMMAND, f"nothing was stored: {exc.strerror}") from None
    except OSError as exc:
        raise UserError(
            COMMAND, f"cannot read {exc.filename or args.file}: {exc.strerror}"
        ) from None
    return 0
