"""Peak memory of a large usage-export import and of the report after it (issue 20, item 12).

    python bench/import_memory.py [--rows 685000]

Writes a seeded export of `rows` rows (685,000 rows is ~60 MB, the size of the largest real
export we know of) dated over the 25 days before now, then measures three fresh `codeburn`
processes on a fresh cache: `import cursor FILE`, the `report --period 30days` that follows, and
the same import again (every row already stored: the merge with a full store). Target: each
peaks at ≤ 300 MB RSS. Prints one JSON object (`s` wall seconds, `cpu` user + system seconds of
the process); exits 1 when a target is missed.

It also imports the first `--packed-rows` rows (20,000) in process under `tracemalloc`, into an
empty store and again into the store that holds them: rows and events are held packed, so the
Python heap's peak stays below 400 and 600 bytes a row (every row an object, then every event
an object, took ~735 and ~1,340; packed ~220 and ~300). Moved here from the unit tests, where
tracing 20,000 rows took ~17 s of every run.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import Run, codeburn, env_for

TARGET_MB: Final = 300
PACKED_ROWS: Final = 20_000
BYTES_PER_ROW: Final = (400, 600)  # heap peak a row: into an empty store, into a full one
DAY_MS: Final = 86_400_000
COLUMNS: Final = (
    "Date", "Cloud Agent ID", "Automation ID", "Kind", "Model", "Max Mode",
    "Input (w/ Cache Write)", "Input (w/o Cache Write)", "Cache Read", "Output Tokens",
    "Total Tokens", "Cost",
)  # fmt: skip
MODELS: Final = ("auto", "claude-4.5-sonnet-thinking", "gpt-5", "composer-1", "claude-4.6-opus")


def write_export(path: Path, rows: int, now_ms: int, seed: int = 12) -> None:
    rng = random.Random(seed)
    start = now_ms - 25 * DAY_MS
    step = (24 * DAY_MS) // max(rows, 1)
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        out.writerow(COLUMNS)
        for n in range(rows):
            ms = start + n * step + rng.randrange(max(step, 1))
            when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000))
            cw, inp = rng.randrange(0, 60_000), rng.randrange(0, 20_000)
            cr, out_t = rng.randrange(0, 2_000_000), rng.randrange(0, 8_000)
            billed = rng.random() < 0.3
            out.writerow(
                (
                    f"{when}.{ms % 1000:03d}Z", "", "",
                    "On-Demand" if billed else "Included", rng.choice(MODELS),
                    "Yes" if rng.random() < 0.2 else "No",
                    cw, inp, cr, out_t, cw + inp + cr + out_t,
                    f"{rng.random() * 2:.2f}" if billed else "Included",
                )
            )  # fmt: skip


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(args: list[str], env: dict[str, str]) -> tuple[Run, dict[str, float | int]]:
    """One process, and its figures: wall and CPU seconds, peak RSS (MB)."""
    before = _cpu_seconds()
    run = codeburn(args, env)
    cpu = _cpu_seconds() - before
    return run, {"s": round(run.seconds, 2), "cpu": round(cpu, 2), "peakMB": run.max_rss_kb // 1024}


def bytes_per_row(root: Path, rows: int, now_ms: int) -> tuple[float, float]:
    """Peak traced heap a row of an in-process import: into an empty store, then the same rows
    into the store that holds them."""
    import tracemalloc  # noqa: PLC0415

    from codeburn.cache.imports.store import import_file  # noqa: PLC0415

    export, store = root / "packed.csv", root / "packed-store" / "cursor-usage.v3.json"
    write_export(export, rows, now_ms)
    peaks = []
    for _ in range(2):
        tracemalloc.start()
        try:
            import_file(export, path=store)
            peaks.append(tracemalloc.get_traced_memory()[1] / rows)
        finally:
            tracemalloc.stop()
    return peaks[0], peaks[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=685_000)
    parser.add_argument("--packed-rows", type=int, default=PACKED_ROWS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codeburn-import-memory-") as tmp:
        root = Path(tmp)
        export = root / "usage-events.csv"
        now_ms = int(time.time() * 1000)
        write_export(export, args.rows, now_ms)
        env = env_for(root / "no-cursor" / "state.vscdb", root / "cache", root / "config", root)
        importing = ["import", "cursor", str(export), "--format", "json"]
        imported, import_figures = measured(importing, env)
        summary = json.loads(imported.stdout)
        reporting = ["report", "--period", "30days", "--format", "json", "--no-sync"]
        report, report_figures = measured(reporting, env)
        totals = json.loads(report.stdout)["totals"]
        again, again_figures = measured(importing, env)
        skipped = json.loads(again.stdout)["skipped"]
        store = root / "cache" / "imports" / "cursor-usage.v3.json"
        packed = bytes_per_row(root, args.packed_rows, now_ms)
        result = {
            "rows": args.rows,
            "exportMB": round(export.stat().st_size / 2**20, 1),
            "storeMB": round(store.stat().st_size / 2**20, 1),
            "import": import_figures,
            "report": report_figures,
            "importAgain": again_figures,
            "stored": summary["total"],
            "reportedCalls": totals["calls"],
            "skippedAgain": skipped,
            "targetMB": TARGET_MB,
            "packedRows": args.packed_rows,
            "bytesPerRow": [round(b) for b in packed],
            "targetBytesPerRow": list(BYTES_PER_ROW),
        }
    print(json.dumps(result))
    peaks = (import_figures["peakMB"], report_figures["peakMB"], again_figures["peakMB"])
    counts = (summary["total"], totals["calls"], skipped)
    packed_ok = all(b < target for b, target in zip(packed, BYTES_PER_ROW, strict=True))
    return 0 if max(peaks) <= TARGET_MB and all(n == args.rows for n in counts) and packed_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
