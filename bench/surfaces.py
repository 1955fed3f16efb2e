"""What importing a lazy package surface at once would cost the paths that start often.

`.venv/bin/python bench/surfaces.py [--runs 21]` (about a minute and a half): copies this tree
once as it is and once per lazy package with that package imported at once (its
`if TYPE_CHECKING:` imports run), then times, alternating the copies, each in a fresh process:
the CLI's imports, the imports of the language server's first status, and a warm
`codeburn status --format json` on the demo's Cursor 3.x sample (its caches written by one
report first). Prints the median of each and its difference to this tree (bench/README.md,
"Package surfaces").
"""

from __future__ import annotations

import argparse
import ast
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("server", "providers", "cache", "sync")
LAZY = {
    "agent": "providers/agent/__init__.py",
    "agents": "providers/agents/__init__.py",
    "ide": "providers/ide/__init__.py",
}
PROBES = {
    "cli": "import codeburn.server.cli.main, codeburn.server.service, codeburn.cache",
    "lsp": (
        "import codeburn.server.lsp.bootstrap, codeburn.server.lsp.settings, "
        "codeburn.server.lsp.status, codeburn.server.service, codeburn.providers; "
        "codeburn.providers.resolve_db_path"
    ),
}


def eager(init: Path) -> None:
    """Rewrite a lazy `__init__` so that its `TYPE_CHECKING` imports run at import."""
    source = init.read_text()
    lines = source.splitlines(keepends=True)
    kept: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            kept += [ast.unparse(stmt) + "\n" for stmt in node.body]
        elif not (isinstance(node, ast.ImportFrom) and node.module == "codeburn.providers.lazy"):
            kept += lines[node.lineno - 1 : node.end_lineno]
    init.write_text("".join(kept))


def tree(where: Path, name: str) -> Path:
    """A copy of the package under `where/name/codeburn` (put first on PYTHONPATH)."""
    top = where / name
    for layer in LAYERS:
        shutil.copytree(
            ROOT / layer, top / "codeburn" / layer, ignore=shutil.ignore_patterns("__pycache__")
        )
    if name in LAZY:
        eager(top / "codeburn" / LAZY[name])
    compileall.compile_dir(top, quiet=1)
    return top


def env_for(top: Path, sample: Path, caches: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(top),
        CODEBURN_CURSOR_DB=str(sample / "Cursor3" / "User" / "globalStorage" / "state.vscdb"),
        CODEBURN_CURSOR_HOME=str(sample / "home"),
        CODEBURN_CACHE_DIR=str(caches / "cache"),
        CODEBURN_CONFIG_DIR=str(caches / "config"),
        CODEBURN_CURSOR_SYNC="0",
        CLAUDE_CONFIG_DIR=str(sample / "no-claude"),
        CODEX_HOME=str(sample / "no-codex"),
    )
    env.pop("CODEBURN_LOG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def probe(env: dict[str, str], code: str) -> float:
    timed = f"import time\nt = time.perf_counter()\n{code}\nprint(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", timed], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout)


def status(env: dict[str, str]) -> float:
    started = time.perf_counter()
    argv = [sys.executable, "-m", "codeburn.server.cli.main", "status", "--format", "json"]
    subprocess.run(argv, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeburn-surfaces-") as tmp:
        where = Path(tmp)
        sample = where / "sample"
        write = (
            "import sys\nfrom pathlib import Path\n"
            "from codeburn.providers.samples import Cursor3Spec, generate_cursor3_profile\n"
            "s = Path(sys.argv[1])\n"
            "generate_cursor3_profile(s / 'Cursor3', s / 'home', Cursor3Spec())\n"
        )
        subprocess.run([sys.executable, "-c", write, str(sample)], check=True)
        names = ["as is", *LAZY]
        envs = {}
        for name in names:
            envs[name] = env_for(tree(where, name), sample, where / f"caches-{name}")
            report = ["report", "--format", "json", "--period", "all", "--no-sync"]
            subprocess.run(
                [sys.executable, "-m", "codeburn.server.cli.main", *report],
                env=envs[name],
                capture_output=True,
                check=True,
            )
        times: dict[str, dict[str, list[float]]] = {n: {} for n in names}
        for run in range(args.runs + 1):  # the first round warms the page cache, untimed
            for name in names if run % 2 else names[::-1]:
                got = {k: probe(envs[name], code) for k, code in PROBES.items()}
                got["warm status"] = status(envs[name])
                for k, seconds in got.items():
                    if run:
                        times[name].setdefault(k, []).append(seconds)
        print(f"median of {args.runs} runs, ms (difference to the tree as is)")
        for name in names:
            cells = []
            for k, xs in times[name].items():
                ms, base = statistics.median(xs) * 1e3, statistics.median(times["as is"][k]) * 1e3
                cells.append(f"{k} {ms:6.1f} ({ms - base:+5.1f})")
            label = name if name == "as is" else f"{name} at once"
            print(f"{label:14s} " + "   ".join(cells))


if __name__ == "__main__":
    main()
