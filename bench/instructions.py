"""Instructions each process of a cold report executes, counted by Valgrind's cachegrind.

    .venv/bin/python bench/instructions.py --layout cursor3 --size 50000
    .venv/bin/python bench/instructions.py --layout cursor3 --size 50000 --base 7dceb83

Runs the bench's cold report (`report --format json --period all --no-sync`, a fresh cache
folder) under `valgrind --tool=cachegrind --cache-sim=no` and prints the instructions of the
CLI process and of every process it forks (in the order they started: on the 3.x profile the
transcripts reader, the JSON-and-bubbles side, then the cache writer after the output). With
`--base`, the same for that commit (a `git worktree` of it in a temporary folder) and the
difference. Both trees are imported through the same kind of `PYTHONPATH` folder, each run
once without Valgrind first so that its compiled modules are cached, and hash seeds are fixed.

Why: the host's noise (±10–15 % between runs of the same commit, bench/README.md) is larger
than most changes worth making, while instruction counts repeat to a few parts in a million.
They are not time (memory stalls, two cores shared by three processes), so a change they
favour is still checked with `run.py`; they tell whether it does less work, and where.

A forked process starts with its parent's count at the fork (Valgrind's counters are copied
with its memory): its own work is its count minus that, which differs between two trees only
by what the parent did before forking. Linux only; Valgrind runs the report ~50× slower (about
two minutes for the 3.x profile).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import (  # noqa: E402
    COLD_REPORT,
    REPO,
    checked_out,
    env_for,
    into_page_cache,
    run_process,
    site_for,
)
from profiles import LAYOUTS, Profile, ensure_profile  # noqa: E402

_REFS: Final = re.compile(r"^==(\d+)== I\s+refs:\s+([\d,]+)", re.MULTILINE)
_PARENT: Final = re.compile(r"^==\d+== Parent PID: (\d+)", re.MULTILINE)
WRITER_WAIT_S: Final = 120.0  # the cache writer ends after the report, ~50× slower too


@dataclass(frozen=True, slots=True)
class Counted:
    pid: int
    parent: int
    instructions: int


def _counts(log_dir: Path, deadline: float) -> list[Counted]:
    """Each process's count, once every log that was started has its summary (the cache
    writer writes its own after the report's process ended)."""
    while True:
        logs = [p.read_text(errors="replace") for p in sorted(log_dir.glob("vg.*"))]
        if (logs and all(_REFS.search(text) for text in logs)) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    out: list[Counted] = []
    for text in logs:
        refs, parent = _REFS.search(text), _PARENT.search(text)
        if refs is None or parent is None:
            raise RuntimeError(f"a process did not finish under Valgrind:\n{text[-2000:]}")
        out.append(Counted(int(refs[1]), int(parent[1]), int(refs[2].replace(",", ""))))
    return sorted(out, key=lambda c: c.pid)


def count_cold_report(profile: Profile, site: Path, tmp: Path, label: str) -> list[Counted]:
    """The instructions of one cold report of `profile`, the package imported from `site`."""
    config = tmp / f"config-{label}"
    env = env_for(profile.db_path, tmp / f"warm-{label}", config, profile.home)
    env.update(PYTHONPATH=str(site), PYTHONHASHSEED="0")
    argv = [sys.executable, "-m", "codeburn.server.cli.main", *COLD_REPORT]
    run_process(argv, env)  # compiles and caches the tree's modules, uncounted
    into_page_cache(profile.db_path, profile.home)
    env["CODEBURN_CACHE_DIR"] = str(tmp / f"cache-{label}")
    logs = tmp / f"logs-{label}"
    logs.mkdir()
    valgrind = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
        f"--log-file={logs}/vg.%p",
    ]  # fmt: skip
    run_process([*valgrind, *argv], env)
    return _counts(logs, time.monotonic() + WRITER_WAIT_S)


def _names(counted: list[Counted]) -> list[str]:
    """`cli` for the process this script started, `fork <n>` for the others (pid order)."""
    names, forks = [], 0
    for c in counted:
        if c.parent == os.getpid():
            names.append("cli")
        else:
            forks += 1
            names.append(f"fork {forks}")
    return names


def table(counted: list[Counted], base: list[Counted] | None) -> list[str]:
    """One line a process: instructions (G), and against `base` when given. No total: a
    forked process's count holds its parent's at the fork."""
    lines = [
        f"{'process':<8} {'instructions':>14}" + (f" {'base':>14} {'change':>8}" if base else "")
    ]
    if base is not None and len(base) != len(counted):
        forks = f"{len(base) - 1} processes, this tree {len(counted) - 1}"
        lines.append(f"(the base forked {forks}: no line by line comparison)")
        lines += (
            f"base {name:<8} {c.instructions / 1e9:>7.3f} G"
            for name, c in zip(_names(base), base, strict=True)
        )
        base = None
    for i, (name, c) in enumerate(zip(_names(counted), counted, strict=True)):
        line = f"{name:<8} {c.instructions / 1e9:>12.3f} G"
        if base is not None:
            was = base[i].instructions
            line += f" {was / 1e9:>12.3f} G {100 * (c.instructions - was) / was:>+7.1f}%"
        lines.append(line)
    lines.append("(a fork's count starts from its parent's at the fork)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="cursor3", choices=LAYOUTS)
    parser.add_argument("--size", type=int, default=50_000, help="messages of the profile")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--base", help="a commit to compare with (counted the same way)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    profile = ensure_profile(args.size, args.seed, layout=args.layout)
    with tempfile.TemporaryDirectory(prefix="codeburn-instructions-") as tmp_name:
        tmp = Path(tmp_name)
        base = None
        if args.base is not None:
            with checked_out(args.base, tmp / "base-tree") as tree:
                base = count_cold_report(profile, site_for(tree, tmp / "base-site"), tmp, "base")
        counted = count_cold_report(profile, site_for(REPO, tmp / "site"), tmp, "tree")
    print(f"{args.layout} {args.size:,}: a cold report under cachegrind")
    print("\n".join(table(counted, base)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
