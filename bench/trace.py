"""Where a cold report's time goes: marks around the reader's steps, in every process.

    .venv/bin/python bench/trace.py                                # bubbles 100k, one run
    .venv/bin/python bench/trace.py --layout cursor3 --size 50000 --reps 3
    .venv/bin/python bench/trace.py --layout cursor3 --size 50000 --bump   # memos kept
    .venv/bin/python bench/trace.py --steps codeburn.providers.ide.layout3.reader:_next_memo

Runs the bench's cold report (`report --format json --period all --no-sync`, a fresh cache
folder, the profile's files in the page cache) through a wrapper that marks the entry and the
exit of each function in `STEPS`, in the CLI process and in every process it forks. A mark is
the time since that process's parent started (read from /proc, so interpreter start counts)
and the process's own CPU time. Each run prints its timeline, then each process's span and
CPU: which process is the critical path, and which one waits. `--bump` keeps only the memos
of a first cold report, as the bench's (b') does.

The marks cost about a microsecond each (a few dozen a run), but the wrapper imports the
marked modules before the CLI starts, so "cli imported" includes the readers' imports. Linux
only (it reads /proc; the CLI forks only there).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

HERE: Final = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

if TYPE_CHECKING:  # the traced process imports nothing of the bench's own
    from profiles import Profile

# The steps marked, as module:qualified name. A name the code no longer has is an error: the
# trace must not quietly lose a step.
STEPS: Final = (
    "codeburn.server.service.usage:UsageService.report",
    "codeburn.providers.local:LocalReader.read",
    "codeburn.providers.local:AgentSide.read",
    "codeburn.providers.local:AgentSide.combine",
    "codeburn.providers.ide.full_parse:FullParse._full",
    "codeburn.providers.ide.full_parse:FullParse._older_aside",
    "codeburn.providers.ide.full_parse:FullParse._layout3_pass",
    "codeburn.providers.ide.full_parse:FullParse._cold_side_work",
    "codeburn.providers.ide.full_parse:FullParse._scan_bubbles",
    "codeburn.providers.ide.full_parse:FullParse._prepare_scan",
    "codeburn.providers.ide.full_parse:FullParse._finish_scan",
    "codeburn.providers.ide.layout3.reader:read_layout3",
    "codeburn.providers.ide.layout3.reader:_walk_ahead",
    "codeburn.providers.ide.layout3.blob_scan:ScannedParts.read",
    "codeburn.providers.ide.layout3.blob_scan:json_records",
    "codeburn.providers.ide.older:_older_pages",
    "codeburn.providers.ide.older:OlderRows.walker",
    "codeburn.providers.ide.stream_rows:walk_all",
)
INNER: Final = "--inner"
EXTRA_STEPS: Final = "CODEBURN_TRACE_STEPS"  # more steps for one run (`--steps`), comma-separated
Mark = tuple[float, int, float, str]  # (seconds since the CLI started, pid, CPU s, what)


# -- inside the traced process ------------------------------------------------------------------


def _since_start() -> float:
    """Seconds since this process started (its start time in /proc, in clock ticks)."""
    with open("/proc/self/stat", encoding="ascii") as stat:
        ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime", encoding="ascii") as uptime:
        up = float(uptime.read().split()[0])
    return up - ticks / os.sysconf("SC_CLK_TCK")


def _wrapped(fn: Callable[..., Any], name: str, mark: Callable[[str], None]) -> Callable[..., Any]:
    def step(*args: Any, **kwargs: Any) -> Any:
        mark(f"{name} >")
        try:
            return fn(*args, **kwargs)
        finally:
            mark(f"{name} <")

    return step


def _patch(spec: str, mark: Callable[[str], None]) -> None:
    """Wrap one step: on its class, or in every module that holds the function by name (a
    `from x import f` caller keeps its own reference)."""
    module_name, qualified = spec.split(":")
    owner: Any = importlib.import_module(module_name)
    *outer, name = qualified.split(".")
    for part in outer:
        owner = getattr(owner, part)
    original = getattr(owner, name, None)
    if original is None:
        raise SystemExit(f"trace: {spec} no longer exists; update STEPS in bench/trace.py")
    step = _wrapped(original, qualified, mark)
    if outer:
        setattr(owner, name, step)
        return
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("codeburn") and (
            getattr(module, name, None) is original
        ):
            setattr(module, name, step)


def inner(trace_file: str, cli_args: list[str]) -> None:
    """The CLI with marks: each process writes its marks to `trace_file` when it ends."""
    started = time.perf_counter()
    offset = _since_start()
    marks: list[Mark] = []

    def mark(what: str) -> None:
        now = time.perf_counter() - started + offset
        marks.append((now, os.getpid(), time.process_time(), what))

    def dump() -> None:
        lines = "".join(f"{t:.4f} {pid} {cpu:.4f} {what}\n" for t, pid, cpu, what in marks)
        fd = os.open(trace_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, lines.encode())  # one write: processes ending together do not mix
        finally:
            os.close(fd)

    real_exit = os._exit

    def traced_exit(code: int) -> None:  # children and the CLI end with os._exit
        mark("exit")
        dump()
        real_exit(code)

    os._exit = traced_exit  # type: ignore[assignment]

    def forked() -> None:
        marks.clear()
        mark("forked")

    os.register_at_fork(after_in_child=forked)
    mark("start")
    from codeburn.server.cli import main as cli_main  # noqa: PLC0415 - after the first mark

    extra = [s for s in os.environ.get(EXTRA_STEPS, "").split(",") if s]
    for spec in (*STEPS, *extra):
        _patch(spec, mark)
    mark("cli imported")
    sys.argv = ["codeburn", *cli_args]
    try:
        cli_main.run()
    finally:  # an exception before run()'s own os._exit
        mark("exit")
        dump()


# -- the driver ---------------------------------------------------------------------------------


def read_marks(trace_file: Path) -> list[Mark]:
    marks: list[Mark] = []
    for line in trace_file.read_text(encoding="utf-8").splitlines():
        t, pid, cpu, what = line.split(" ", 3)
        marks.append((float(t), int(pid), float(cpu), what))
    return sorted(marks)


def process_names(marks: list[Mark]) -> dict[int, str]:
    """`cli` for the first process; a forked one by the first step it ran (else `forked`)."""
    names: dict[int, str] = {}
    for k, pid in enumerate(dict.fromkeys(m[1] for m in marks)):
        steps = (w[:-2] for _t, p, _cpu, w in marks if p == pid and w.endswith(" >"))
        names[pid] = "cli" if k == 0 else f"#{k} {next(steps, 'forked')}"
    return names


def timeline(marks: list[Mark]) -> list[str]:
    """The marks in time order, then each process's span and CPU."""
    names = process_names(marks)
    width = max(len(n) for n in names.values())
    lines = [f"{'t (s)':>7}  {'process':<{width}}  {'cpu (s)':>7}  mark"]
    lines += [f"{t:7.3f}  {names[pid]:<{width}}  {cpu:7.3f}  {w}" for t, pid, cpu, w in marks]
    lines.append("processes (first mark, last mark, CPU at the last):")
    for pid, name in names.items():
        own = [m for m in marks if m[1] == pid]
        lines.append(
            f"  {name:<{width}}  {own[0][0]:.3f}-{own[-1][0]:.3f} s  cpu {own[-1][2]:.3f} s"
        )
    return lines


def _traced_run(
    env: dict[str, str], profile: Profile, trace_file: Path
) -> tuple[float, list[Mark]]:
    from measure import COLD_REPORT, into_page_cache, run_process  # noqa: PLC0415

    trace_file.unlink(missing_ok=True)
    into_page_cache(profile.db_path, profile.home)
    argv = [sys.executable, str(Path(__file__).resolve()), INNER, str(trace_file)]
    run = run_process([*argv, *COLD_REPORT], env)
    return run.seconds, read_marks(trace_file)


def main(argv: list[str] | None = None) -> int:
    from measure import env_for, keep_only_memo  # noqa: PLC0415
    from profiles import LAYOUTS, ensure_profile  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="bubbles", choices=LAYOUTS)
    parser.add_argument("--size", type=int, default=100_000, help="messages of the profile")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reps", type=int, default=1, help="traced runs")
    parser.add_argument("--bump", action="store_true", help="trace a start with only the memos")
    parser.add_argument(
        "--steps", default="", help="more steps to mark, as module:qualified.name,... (see STEPS)"
    )
    args = parser.parse_args(argv)
    profile = ensure_profile(args.size, args.seed, layout=args.layout)
    with tempfile.TemporaryDirectory(prefix="codeburn-trace-") as tmp_name:
        tmp = Path(tmp_name)
        for rep in range(args.reps):
            cache = tmp / f"cache-{rep}"
            env = env_for(profile.db_path, cache, tmp / "config", profile.home)
            env[EXTRA_STEPS] = args.steps
            if args.bump:  # a first cold report leaves the memos; only they are kept
                _traced_run(env, profile, tmp / "first.log")
                keep_only_memo(cache, tmp / f"bump-{rep}")
                env = env_for(profile.db_path, tmp / f"bump-{rep}", tmp / "config", profile.home)
                env[EXTRA_STEPS] = args.steps
            seconds, marks = _traced_run(env, profile, tmp / "trace.log")
            print(f"{args.layout} {args.size:,}, run {rep + 1}: {seconds:.3f} s (whole process)")
            print("\n".join(timeline(marks)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == INNER:
        inner(sys.argv[2], sys.argv[3:])
    sys.exit(main())
