"""CodeBurn benchmark: parse cost against the raw SQLite floor on synthetic Cursor profiles.

    .venv/bin/python bench/run.py            # 100k and 300k messages + Cursor 3.x 50k, median of 3
    .venv/bin/python bench/run.py --sizes 100000 --reps 5
    .venv/bin/python bench/run.py --layouts cursor3 --cursor3-sizes 20000

See bench/README.md for what is measured and the targets.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

HERE: Final = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lsp_start import first_status_seconds, resident_mb  # noqa: E402
from measure import (  # noqa: E402
    COLD_REPORT,
    Run,
    child_task,
    codeburn,
    env_for,
    into_page_cache,
    keep_only_memo,
    same_figures,
)
from profiles import (  # noqa: E402
    BUBBLE_LAYOUTS,
    LAYOUTS,
    Layout,
    Profile,
    ensure_profile,
    working_copy,
)

# Issue 19's targets (ratios within one run).
COLD_FLOOR: Final[dict[str, float]] = {
    "bubbles": 1.6,
    "headers": 1.6,
    "headers-roots": 1.8,
    "cursor3": 2.5,
}
PEAK_RSS_MB: Final[dict[int, float]] = {100_000: 100.0, 300_000: 200.0}  # bubble-floor layouts
# A cold report with only the blob and agent memos kept (a cache version bump), over the floor.
BUMP_FLOOR: Final = 1.5
TARGETS: Final = {
    "cold/floor": COLD_FLOOR,
    "after a version bump/floor": {"cursor3": BUMP_FLOOR},
    "warm status s": 0.3,
    "incremental/cold": 0.03,
    "peak RSS MB": {**{str(k): v for k, v in PEAK_RSS_MB.items()}, "cursor3": 250.0},
    "LSP first status s": 1.0,
    "LSP resident MB, 100k": 80.0,
    "LSP resident after refreshes / first": 1.2,
}


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _lsp_available() -> bool:
    return importlib.util.find_spec("codeburn.server.lsp.server") is not None


def _floor(task: list[str], db: Path, home: Path) -> float:
    """(a) in a fresh process, its files read into the page cache first (as for (b))."""
    into_page_cache(db, home)
    seconds: float = child_task(*task)["seconds"]
    return seconds


def _cold(env: dict[str, str], db: Path, home: Path) -> Run:
    """(b): a cold report as a whole process, its files read into the page cache first."""
    into_page_cache(db, home)
    return codeburn(list(COLD_REPORT), env)


def measure_size(profile: Profile, reps: int, lsp: bool) -> dict[str, Any]:
    """All measurements for one profile; floor, cold and warm interleaved rep by rep."""
    db, home, floor_task = profile.db_path, profile.home, profile.floor_task
    os.sync()  # the last profile's working copy written back before anything is timed
    with tempfile.TemporaryDirectory(prefix="codeburn-bench-") as tmp_name:
        tmp = Path(tmp_name)
        config = tmp / "config"
        child_task(*floor_task)  # untimed: the files into the page cache
        floors: list[float] = []
        colds: list[float] = []
        rss_kb: list[int] = []
        warms: list[float] = []
        bumps: list[tuple[float, bool]] = []  # Cursor 3.x: cold with only the blob memo kept
        for rep in range(reps):
            floors.append(_floor(floor_task, db, home))
            env = env_for(db, tmp / f"cache-{rep}", config, home)
            cold = _cold(env, db, home)
            colds.append(cold.seconds)
            rss_kb.append(cold.max_rss_kb)
            warms.append(codeburn(["status", "--format", "json"], env).seconds)
            _say(
                f"  rep {rep + 1}: floor {floors[-1]:.2f} s, cold {colds[-1]:.2f} s "
                f"({rss_kb[-1] / 1024:.0f} MB), warm status {warms[-1]:.3f} s"
            )
            if profile.layout == "cursor3":
                bumps.append(_after_bump(profile, tmp, rep, cold.stdout))
        report = json.loads(cold.stdout)
        lsp_times: list[float] = []
        resident: dict[str, float] | None = None
        if lsp:
            for _ in range(reps):
                seconds, _payload = first_status_seconds(env)
                lsp_times.append(seconds)
            _say(f"  LSP first status: {', '.join(f'{s:.3f}' for s in lsp_times)} s")
            # A fresh cache: the server parses the database itself (with (b)'s caches it
            # answers from them and never holds a parse).
            resident = resident_mb(env_for(db, tmp / "lsp-cache", config, home))
            _say(
                f"  LSP resident: {resident['afterFirstStatus']:.0f} MB 5 s after the first"
                f" status, {resident['afterRefreshes']:.0f} MB after 10 refreshes"
            )
        copy, copy_home = working_copy(profile, tmp / "work")
        inc_env = env_for(copy, tmp / "inc-cache", config, copy_home)
        incremental = child_task(
            "incremental", str(copy), str(tmp / "inc-cache"), str(reps), profile.layout,
            env=inc_env,
        )  # fmt: skip
        _say(
            f"  incremental: append {_median(incremental['append']):.3f} s, "
            f"update {_median(incremental['update']):.3f} s, "
            f"equal to a cold parse: {incremental['equalsColdParse']}"
        )
        if incremental["replace"]:
            _say(
                f"  replaced root: {_median(incremental['replace']):.3f} s "
                f"({incremental['replaceFullParses']} full parse(s) in {reps})"
            )
    floor, cold_s = _median(floors), _median(colds)
    refresh = max(_median(incremental["append"]), _median(incremental["update"]))
    bump = _bump_summary(bumps)
    return {
        "layout": profile.layout,
        "bubbles": profile.bubbles,
        "agentRows": profile.agent_rows,
        "conversations": profile.conversations,
        "databaseMB": profile.size_bytes / 1e6,
        "generatedSeconds": profile.generated_s,
        "calls": report["totals"]["calls"],
        "warnings": report["warnings"],
        "floor": {"median": floor, "runs": floors},
        "cold": {"median": cold_s, "runs": colds},
        "peakRssMB": {"median": _median([k / 1024 for k in rss_kb]), "runs": rss_kb},
        "warmStatus": {"median": _median(warms), "runs": warms},
        "incremental": incremental,
        "lspFirstStatus": {"median": _median(lsp_times), "runs": lsp_times} if lsp else None,
        "lspResidentMB": resident,
        "ratios": {
            "cold/floor": cold_s / floor,
            "incremental/cold": refresh / cold_s,
            **({"after a version bump/floor": bump["median"] / floor} if bump else {}),
        },
        "afterVersionBump": bump,
    }


def _after_bump(profile: Profile, tmp: Path, rep: int, cold_report: bytes) -> tuple[float, bool]:
    """A cold report with only the memos of rep `rep`'s cold report kept: its seconds, and
    whether its figures are the cold report's."""
    env = env_for(profile.db_path, tmp / f"bump-{rep}", tmp / "config", profile.home)
    keep_only_memo(tmp / f"cache-{rep}", tmp / f"bump-{rep}")
    run = _cold(env, profile.db_path, profile.home)
    same = same_figures(cold_report, run.stdout)
    _say(f"  after a version bump (memos kept): {run.seconds:.2f} s, same figures: {same}")
    return run.seconds, same


def _bump_summary(bumps: list[tuple[float, bool]]) -> dict[str, Any] | None:
    if not bumps:
        return None
    runs = [seconds for seconds, _ in bumps]
    return {"median": _median(runs), "runs": runs, "sameFigures": all(s for _, s in bumps)}


def _rss_target(size: dict[str, Any]) -> float | None:
    if size["layout"] == "cursor3":
        return 250.0
    return PEAK_RSS_MB.get(size["bubbles"])


def _checks(size: dict[str, Any]) -> dict[str, bool]:
    layout = size["layout"]
    checks = {
        "cold/floor": size["ratios"]["cold/floor"] <= COLD_FLOOR[layout],
        "warm status s": size["warmStatus"]["median"] <= TARGETS["warm status s"],
        "incremental/cold": size["ratios"]["incremental/cold"] <= TARGETS["incremental/cold"],
        "incremental equals cold": bool(size["incremental"]["equalsColdParse"]),
    }
    bump = size.get("afterVersionBump")
    if bump is not None:
        checks["after a version bump/floor"] = (
            size["ratios"]["after a version bump/floor"] <= BUMP_FLOOR
        )
        checks["after a version bump: same figures"] = bool(bump["sameFigures"])
    if (rss := _rss_target(size)) is not None:
        checks["peak RSS MB"] = size["peakRssMB"]["median"] <= rss
    if size["lspFirstStatus"] is not None:
        lsp = size["lspFirstStatus"]["median"]
        checks["LSP first status s"] = lsp <= TARGETS["LSP first status s"]
    resident = size.get("lspResidentMB")
    if resident is not None:
        first, after = resident["afterFirstStatus"], resident["afterRefreshes"]
        if size["bubbles"] == 100_000 and layout in BUBBLE_LAYOUTS:
            checks["LSP resident MB, 100k"] = first <= TARGETS["LSP resident MB, 100k"]
        ratio = TARGETS["LSP resident after refreshes / first"]
        checks["LSP resident after refreshes / first"] = after <= ratio * first
    return checks


def print_table(sizes: list[dict[str, Any]]) -> None:
    rows = [
        ("layout", lambda s: str(s["layout"])),
        ("messages", lambda s: f"{s['bubbles']:,}"),
        ("(a) floor: one SQLite pass", lambda s: f"{s['floor']['median']:.2f} s"),
        ("(b) cold report, whole process", lambda s: f"{s['cold']['median']:.2f} s"),
        ("(c) warm status, whole process", lambda s: f"{s['warmStatus']['median']:.3f} s"),
        (
            "(b') cold, only the memos kept",
            lambda s: (
                "n/a"
                if s.get("afterVersionBump") is None
                else f"{s['afterVersionBump']['median']:.2f} s"
            ),
        ),
        ("(d) refresh after an append", lambda s: f"{_median(s['incremental']['append']):.3f} s"),
        ("(d) refresh after a rewrite", lambda s: f"{_median(s['incremental']['update']):.3f} s"),
        (
            "(d) refresh after a replaced root",
            lambda s: (
                f"{_median(s['incremental']['replace']):.3f} s"
                if s["incremental"]["replace"]
                else "n/a"
            ),
        ),
        ("(e) peak RSS of (b)", lambda s: f"{s['peakRssMB']['median']:.0f} MB"),
        (
            "(f) LSP start → first status",
            lambda s: (
                "n/a" if s["lspFirstStatus"] is None else f"{s['lspFirstStatus']['median']:.3f} s"
            ),
        ),
        (
            "(g) LSP resident 5 s after first status",
            lambda s: _resident(s, "afterFirstStatus"),
        ),
        ("(g) LSP resident after 10 refreshes", lambda s: _resident(s, "afterRefreshes")),
        ("cold / floor  (≤ 1.6; 3.x 2.5; roots 1.8)", lambda s: f"{s['ratios']['cold/floor']:.2f}"),
        (
            "after a version bump / floor  (3.x ≤ 1.5)",
            lambda s: (
                f"{s['ratios']['after a version bump/floor']:.2f}"
                if "after a version bump/floor" in s["ratios"]
                else "n/a"
            ),
        ),
        ("incremental / cold  (≤ 0.03)", lambda s: f"{s['ratios']['incremental/cold']:.3f}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, cell in rows:
        print(f"{name:<{width}}  " + "  ".join(f"{cell(s):>12}" for s in sizes))


def _resident(size: dict[str, Any], which: str) -> str:
    resident = size.get("lspResidentMB")
    return "n/a" if resident is None else f"{resident[which]:.0f} MB"


def _label(size: dict[str, Any]) -> str:
    """A result's name in the checks: its size (bubbles layout), else `cursor3-<size>`."""
    bubbles = str(size["bubbles"])
    return bubbles if size["layout"] == "bubbles" else f"{size['layout']}-{bubbles}"


def _machine() -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "commit": commit,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000", help="messages per bubbles profile")
    parser.add_argument("--cursor3-sizes", default="50000", help="messages per Cursor 3.x profile")
    parser.add_argument(
        "--headers-sizes",
        default="100000",
        help="messages per bubbles + header key profile (headers, headers-roots)",
    )
    parser.add_argument(
        "--layouts", default=",".join(LAYOUTS), help="which layouts: bubbles, cursor3 or both"
    )
    parser.add_argument("--reps", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    parser.add_argument("--regenerate", action="store_true", help="ignore cached profiles")
    args = parser.parse_args(argv)
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    if unknown := [name for name in layouts if name not in LAYOUTS]:
        parser.error(f"unknown layout {', '.join(unknown)} (choose from {', '.join(LAYOUTS)})")
    runs: list[tuple[Layout, int]] = []
    per_layout = (
        ("bubbles", args.sizes),
        ("headers", args.headers_sizes),
        ("headers-roots", args.headers_sizes),
        ("cursor3", args.cursor3_sizes),
    )
    for layout, sizes in per_layout:
        if layout in layouts:
            runs += [(layout, int(s.replace("_", ""))) for s in sizes.split(",") if s.strip()]
    lsp = _lsp_available()
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    for layout, bubbles in runs:
        _say(f"{layout}, {bubbles:,} messages:")
        profile = ensure_profile(bubbles, args.seed, layout=layout, regenerate=args.regenerate)
        if profile.generated_s is not None:
            _say(f"  generated in {profile.generated_s:.1f} s ({profile.size_bytes / 1e6:.0f} MB)")
        results.append(measure_size(profile, args.reps, lsp))
    checks = {_label(s): _checks(s) for s in results}
    print_table(results)
    failed = [f"{size}: {name}" for size, c in checks.items() for name, ok in c.items() if not ok]
    print("targets: " + ("all met" if not failed else "NOT met: " + "; ".join(failed)))
    out = {
        "machine": _machine(),
        "targets": TARGETS,
        "sizes": results,
        "checks": checks,
        "seconds": time.perf_counter() - started,
    }
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    _say(f"wrote {args.out} in {out['seconds']:.0f} s")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
