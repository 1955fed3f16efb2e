"""Real Cursor files (tests/data/real-cursor): copied into tmp_path and read by the CLI at a
fixed clock just after the sample's dates (its data is older than any 6-month window today)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

REAL = Path(__file__).resolve().parent / "data" / "real-cursor"


@dataclass(frozen=True, slots=True)
class Sample:
    folder: str
    now: str  # CODEBURN_NOW for the run (UTC)
    mtime: str  # every copied file's modification time (git keeps none)


SAMPLES = {
    # Bubbles 2026-06-18T00:11:22Z–00:16:45Z; the composer's lastUpdatedAt 00:16:13Z.
    "p01": Sample("p01", "2026-06-18T12:00:00Z", "2026-06-18T00:20:00Z"),
    # Sessions created 2025-08-07 … 2025-08-10.
    "c01": Sample("c01", "2025-08-12T12:00:00Z", "2025-08-11T00:00:00Z"),
    # The commit that holds the transcripts: 2026-01-25.
    "t01": Sample("t01", "2026-01-26T12:00:00Z", "2026-01-25T12:00:00Z"),
    # The commit: 2024-11-18.
    "p11": Sample("p11", "2024-11-19T12:00:00Z", "2024-11-18T12:00:00Z"),
}


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def copy_sample(name: str, tmp_path: Path) -> Path:
    """The sample's files under `tmp_path/<name>` (`.gz` files decompressed), each dated."""
    sample = SAMPLES[name]
    source, target = REAL / sample.folder, tmp_path / name
    when = _epoch(sample.mtime)
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".gz":
            out = out.with_suffix("")
            with gzip.open(path, "rb") as src, out.open("wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(path, out)
        os.utime(out, (when, when))
    return target


def report(
    name: str, tmp_path: Path, *args: str, db: Path | None = None, home: Path | None = None
) -> tuple[dict[str, Any], str]:
    """`codeburn report --format json` at the sample's clock (UTC): (report, stderr)."""
    env = {
        **os.environ,
        "CODEBURN_NOW": SAMPLES[name].now,
        "TZ": "UTC",
        "CODEBURN_CACHE_DIR": str(tmp_path / "cache"),
        "CODEBURN_CONFIG_DIR": str(tmp_path / "config"),
        "CODEBURN_CURSOR_SYNC": "0",
        "CODEBURN_CURSOR_HOME": str(home if home is not None else tmp_path / "no-cursor-home"),
        # No IDE database: named by the variable, which keeps `no-data` (an explicit
        # --cursor-db that does not exist is an error, docs/cli.md).
        "CODEBURN_CURSOR_DB": str(db or tmp_path / "none.vscdb"),
    }
    argv = [sys.executable, "-m", "codeburn.server.cli", "report", "--format", "json"]
    argv += ["--no-sync", "--period", "all"]
    done = subprocess.run(
        [*argv, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr
