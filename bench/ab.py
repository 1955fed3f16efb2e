"""Cold report of this tree against another commit, by the clock, in one run.

    .venv/bin/python bench/ab.py --base HEAD                      # bubbles 100k, 9 rounds
    .venv/bin/python bench/ab.py --base 3c71222 --layout cursor3 --size 50000 --rounds 15
    .venv/bin/python bench/ab.py --base bb07475 --layout cursor3 --size 50000 --after-bump

Each round runs the bench's floor, a cold report of the base (a `git worktree` of it) and one
of this tree, in an order that alternates from round to round, each with its files in the page
cache and a fresh cache folder; both trees are imported the same way (a `PYTHONPATH` folder
whose `codeburn` is the tree) and each is run once first, untimed, so that its compiled
modules are cached. It prints the medians of the floor and of both cold reports, cold / floor
of each and the change, and how many rounds this tree was faster: once until each report
ended, the bench's target, and once until its answer was out (the last byte of its output),
what a person waits for. Between the two a command writes its cache files; a tree from
before issue 35 left them to a process that outlived it, so its report ended at its answer.

Why: `run.py` measures one tree; between two of its runs the host moves the ratios by
±10–15 % (bench/README.md), more than most changes worth making. Run side by side, round by
round, the host's hour is the same for both. `instructions.py` says whether a change does less
work; this says whether it is faster, which work moved to the other core can be without
doing less.

`--after-bump` times instead the report of a start after a cache version bump: each tree's
cache folder holds only the memo files its own first report wrote (`keep_only_memo`), as
`run.py`'s "after a version bump" target has it (Cursor 3.x profiles).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import (  # noqa: E402
    COLD_REPORT,
    REPO,
    Run,
    checked_out,
    child_task,
    env_for,
    into_page_cache,
    keep_only_memo,
    run_process,
    site_for,
)
from profiles import LAYOUTS, Profile, ensure_profile  # noqa: E402

# A tree from before issue 35 leaves its cache writer running after the report exits (~0.1 s
# of CPU): each timed run waits this long after the one before, so that no writer of one tree
# runs beside the next run of the other (it took the other core from whichever ran next).
WRITER_WAIT_S: Final = 1.0


def _floor(profile: Profile) -> float:
    into_page_cache(profile.db_path, profile.home)
    seconds: float = child_task(*profile.floor_task)["seconds"]
    return seconds


def _entry(site: Path) -> str:
    """The CLI's module in the tree `site` imports (`server/cli.py` before the restructure's
    `7d2279c`, e.g. at `d68fe15`)."""
    package = site / "codeburn" / "server" / "cli"
    return "codeburn.server.cli.main" if package.is_dir() else "codeburn.server.cli"


def _cold(profile: Profile, site: Path, cache: Path, config: Path) -> Run:
    env = env_for(profile.db_path, cache, config, profile.home)
    env["PYTHONPATH"] = str(site)
    into_page_cache(profile.db_path, profile.home)
    argv = [sys.executable, "-m", _entry(site), *COLD_REPORT]
    return run_process(argv, env)


def measure(
    profile: Profile, sites: dict[str, Path], rounds: int, tmp: Path, *, after_bump: bool = False
) -> dict[str, list[float]]:
    """Seconds of each round: `floor`, one list per site until its report ended, and one per
    site until its answer was out (`<site> answer`; `after_bump`: see the module's
    docstring)."""
    for name, site in sites.items():  # untimed: compiled modules cached (and memos written)
        _cold(profile, site, tmp / f"warm-{name}", tmp / "config")
    times: dict[str, list[float]] = {"floor": []}
    for name in sites:
        times[name], times[f"{name} answer"] = [], []
    names = list(sites)
    for i in range(rounds):
        times["floor"].append(_floor(profile))
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            time.sleep(WRITER_WAIT_S)
            cache = tmp / f"cache-{name}-{i}"
            if after_bump:
                keep_only_memo(tmp / f"warm-{name}", cache)
            run = _cold(profile, sites[name], cache, tmp / "config")
            times[name].append(run.seconds)
            times[f"{name} answer"].append(run.answered)
    return times


def paired_change(
    tree: list[float], base: list[float], resamples: int = 2000
) -> tuple[float, float, float]:
    """The median over rounds of this tree's time ÷ the base's in the same round, less 1, and
    a 90 % bootstrap interval of it (rounds drawn with replacement, a fixed seed): the host's
    speed moves between rounds, less within one."""
    changes = [t / b - 1 for t, b in zip(tree, base, strict=True)]
    draw = random.Random(1)
    medians = sorted(
        statistics.median(draw.choices(changes, k=len(changes))) for _ in range(resamples)
    )
    low, high = medians[int(0.05 * resamples)], medians[int(0.95 * resamples) - 1]
    return statistics.median(changes), low, high


def summary(times: dict[str, list[float]]) -> list[str]:
    floor = statistics.median(times["floor"])
    lines = [f"floor {floor:.3f} s"]
    for label, suffix in (("until the report ended", ""), ("until its answer was out", " answer")):
        base_times, tree_times = times[f"base{suffix}"], times[f"tree{suffix}"]
        base, tree = statistics.median(base_times), statistics.median(tree_times)
        wins = sum(t < b for t, b in zip(tree_times, base_times, strict=True))
        rounds = len(tree_times)
        change, low, high = paired_change(tree_times, base_times)
        lines += [
            f"{label}:",
            f"  base  {base:.3f} s  cold/floor {base / floor:.2f}",
            f"  tree  {tree:.3f} s  cold/floor {tree / floor:.2f}"
            f"  ({100 * (tree - base) / base:+.1f} %, faster in {wins} of {rounds} rounds)",
            f"  round by round: {100 * change:+.1f} % (90 % interval {100 * low:+.1f} to"
            f" {100 * high:+.1f} %)",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--layout", default="bubbles", choices=LAYOUTS)
    parser.add_argument("--size", type=int, default=100_000, help="messages of the profile")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument(
        "--after-bump", action="store_true", help="a start after a cache version bump (3.x)"
    )
    args = parser.parse_args(argv)
    profile = ensure_profile(args.size, args.seed, layout=args.layout)
    # (the last report's cache writer may still be writing when the folder goes)
    with tempfile.TemporaryDirectory(prefix="codeburn-ab-", ignore_cleanup_errors=True) as tmp_name:
        tmp = Path(tmp_name)
        with checked_out(args.base, tmp / "base-tree") as tree:
            sites = {
                "base": site_for(tree, tmp / "base-site"),
                "tree": site_for(REPO, tmp / "site"),
            }
            times = measure(profile, sites, args.rounds, tmp, after_bump=args.after_bump)
        time.sleep(WRITER_WAIT_S)
    what = ", after a cache version bump" if args.after_bump else ""
    print(f"{args.layout} {args.size:,}{what}: {args.rounds} rounds, {args.base} against this tree")
    print("\n".join(summary(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
