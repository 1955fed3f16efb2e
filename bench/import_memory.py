"""Peak memory of a large usage-export import and of the report after it (issue 20, item 12).

    python bench/import_memory.py [--rows 685000]

Writes a seeded export of `rows` rows (685,000 rows is ~60 MB, the size of the largest real
export we know of) dated over the 25 days before now, then measures two fresh `codeburn`
processes on fresh caches: `import cursor FILE` and the `report --period 30days` that follows.
Target: each peaks at ≤ 300 MB RSS. Prints one JSON object; exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import codeburn, env_for

TARGET_MB: Final = 300
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=685_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codeburn-import-memory-") as tmp:
        root = Path(tmp)
        export = root / "usage-events.csv"
        now_ms = int(time.time() * 1000)
        write_export(export, args.rows, now_ms)
        env = env_for(root / "no-cursor" / "state.vscdb", root / "cache", root / "config", root)
        imported = codeburn(["import", "cursor", str(export), "--format", "json"], env)
        summary = json.loads(imported.stdout)
        report = codeburn(["report", "--period", "30days", "--format", "json", "--no-sync"], env)
        totals = json.loads(report.stdout)["totals"]
        store = root / "cache" / "imports" / "cursor-usage.v3.json"
        result = {
            "rows": args.rows,
            "exportMB": round(export.stat().st_size / 2**20, 1),
            "storeMB": round(store.stat().st_size / 2**20, 1),
            "import": {"s": round(imported.seconds, 2), "peakMB": imported.max_rss_kb // 1024},
            "report": {"s": round(report.seconds, 2), "peakMB": report.max_rss_kb // 1024},
            "stored": summary["total"],
            "reportedCalls": totals["calls"],
            "targetMB": TARGET_MB,
        }
    print(json.dumps(result))
    met = max(result["import"]["peakMB"], result["report"]["peakMB"]) <= TARGET_MB  # type: ignore[index]
    return 0 if met and result["stored"] == result["reportedCalls"] == args.rows else 1


if __name__ == "__main__":
    raise SystemExit(main())
