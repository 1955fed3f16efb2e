"""The benchmark's measurements. Each runs in a child process of its own; `python measure.py
TASK ...` is how the parent starts the in-process ones (floor, incremental).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

# The floor selects what the reader needs of every bubble and nothing else: the fields as they
# are (the text as BLOB: Python's sqlite3 raises on undecodable TEXT), by the key index, one
# statement, rows only iterated. It is the least any reader built on SQLite pays to get them.
FLOOR_SQL: Final = """
SELECT key,
       json_extract(value, '$.type'),
       json_extract(value, '$.createdAt'),
       json_extract(value, '$.requestId'),
       json_extract(value, '$.tokenCount.inputTokens'),
       json_extract(value, '$.tokenCount.outputTokens'),
       json_extract(value, '$.modelInfo.modelName'),
       CAST(json_extract(value, '$.text') AS BLOB),
       json_extract(value, '$.codeBlocks')
FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'
"""
# Cursor 3.x adds what a reader must look at besides the bubbles: every conversation's
# composerData, the headers table and every agentKv blob (as bytes, none decoded), then the
# transcripts and CLI stores of the Cursor home, each file read once.
CURSOR3_SQL: Final = (
    "SELECT key, CAST(value AS BLOB) FROM cursorDiskKV"
    " WHERE key >= 'composerData:' AND key < 'composerData;'",
    "SELECT * FROM composerHeaders",
    "SELECT key, CAST(value AS BLOB) FROM cursorDiskKV"
    " WHERE key >= 'agentKv:blob:' AND key < 'agentKv:blob;'",
)
HERE: Final = Path(__file__).resolve()
REPO: Final = HERE.parent.parent


def site_for(tree: Path, folder: Path) -> Path:
    """A `PYTHONPATH` folder whose `codeburn` package is `tree` (the project's flat layout)."""
    folder.mkdir(parents=True)
    (folder / "codeburn").symlink_to(tree, target_is_directory=True)
    return folder


@contextlib.contextmanager
def checked_out(commit: str, tree: Path) -> Iterator[Path]:
    """`commit` as a `git worktree` at `tree` (no work tree of the clone changes), removed
    afterwards."""
    git = ["git", "-C", str(REPO)]
    subprocess.run([*git, "worktree", "add", "-q", "--detach", str(tree), commit], check=True)
    try:
        yield tree
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float  # until the process ended
    max_rss_kb: int
    stdout: bytes
    # Until the last byte of its output came: its answer, what a person waits for. The rest
    # of `seconds` is what it does after (a command writes its cache files then).
    answered: float


def env_for(db: Path, cache_dir: Path, config_dir: Path, home: Path) -> dict[str, str]:
    """The environment of a measured process: the profile's database and Cursor home (never the
    machine's own `~/.cursor`), fresh caches, no sync."""
    env = dict(os.environ)
    env.update(
        CODEBURN_CURSOR_DB=str(db),
        CODEBURN_CURSOR_HOME=str(home),
        CODEBURN_CACHE_DIR=str(cache_dir),
        CODEBURN_CONFIG_DIR=str(config_dir),
        CODEBURN_CURSOR_SYNC="0",
        # never the machine's own Claude Code or Codex logs
        CLAUDE_CONFIG_DIR=str(home / "no-claude-config"),
        CODEX_HOME=str(home / "no-codex-home"),
    )
    env.pop("CODEBURN_LOG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled modules are cached
    return env


def run_process(argv: list[str], env: dict[str, str]) -> Run:
    """Wall time, time to the end of its output and peak RSS of one child process (wait4
    gives that child's own rusage)."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=err)
        assert child.stdout is not None
        chunks: list[bytes] = []
        answered = 0.0
        while chunk := child.stdout.read1(1 << 16):
            chunks.append(chunk)
            answered = time.perf_counter() - started
        out = b"".join(chunks)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        child.stdout.close()
        if child.returncode:
            err.seek(0)
            message = err.read().decode("utf-8", "replace")
            raise RuntimeError(f"{' '.join(argv[1:])} failed ({child.returncode}): {message}")
    return Run(elapsed, usage.ru_maxrss, out, answered)


# (b): the cold report every measurement of it runs.
COLD_REPORT: Final = ("report", "--format", "json", "--period", "all", "--no-sync")


def codeburn(args: list[str], env: dict[str, str]) -> Run:
    return run_process([sys.executable, "-m", "codeburn.server.cli.main", *args], env)


def into_page_cache(db: Path, home: Path) -> None:
    """Read the profile's files once, untimed (the database, its WAL, the Cursor home's
    files): the timed run after it finds them in the page cache, as the floor's does. A host
    that keeps ~1.1 GB of page cache evicts them between profiles, and a cold report then
    waited on the disk for the rows the floor never reads (agent rows, composers)."""
    paths = [db, Path(f"{db}-wal")]
    if home.is_dir():
        paths += [p for p in sorted(home.rglob("*")) if p.is_file()]
    for path in paths:
        try:
            with path.open("rb") as handle:
                while handle.read(1 << 20):
                    pass
        except OSError:
            continue


def keep_only_memo(cache_dir: Path, fresh_dir: Path) -> None:
    """A fresh cache folder holding only the memo files of `cache_dir` — the Cursor 3.x blob
    memo and the agent memo (transcripts' turns by content), where that run wrote one: what a
    start after a cache version bump finds (every versioned cache file is gone; the memos keep
    their version inside and survive it)."""
    from codeburn.cache.agent_memo import FILE as AGENT_MEMO  # noqa: PLC0415
    from codeburn.cache.blob_memo import FILE as BLOB_MEMO  # noqa: PLC0415

    fresh_dir.mkdir(parents=True)
    shutil.copyfile(cache_dir / BLOB_MEMO, fresh_dir / BLOB_MEMO)
    if (cache_dir / AGENT_MEMO).is_file():  # none without transcripts
        shutil.copyfile(cache_dir / AGENT_MEMO, fresh_dir / AGENT_MEMO)


def same_figures(a: bytes, b: bytes) -> bool:
    """Two reports' figures (totals, providers, models, projects, days, conversations)."""
    keys = ("totals", "providers", "models", "projects", "days", "conversations", "warnings")
    left, right = json.loads(a), json.loads(b)
    return all(left.get(k) == right.get(k) for k in keys)


def floor_pass(db: Path) -> tuple[float, int]:
    """(seconds, rows) of one SQLite pass over the bubble fields the reader needs."""
    conn = sqlite3.connect(db.as_uri() + "?mode=ro", uri=True)
    try:
        started = time.perf_counter()
        rows = 0
        for _row in conn.execute(FLOOR_SQL):
            rows += 1
        return time.perf_counter() - started, rows
    finally:
        conn.close()


def floor_cursor3(db: Path, home: Path) -> tuple[float, int]:
    """(seconds, rows + files) of the bubble floor plus everything else the 3.x layout stores."""
    conn = sqlite3.connect(db.as_uri() + "?mode=ro", uri=True)
    try:
        started = time.perf_counter()
        rows = 0
        for sql in (FLOOR_SQL, *CURSOR3_SQL):
            for _row in conn.execute(sql):
                rows += 1
    finally:
        conn.close()
    for path in sorted((home / "projects").glob("*/agent-transcripts/**/*")):
        if path.suffix in (".jsonl", ".txt") and path.is_file():
            path.read_bytes()
            rows += 1
    for store in sorted((home / "chats").glob("*/*/store.db")):
        conn = sqlite3.connect(store.as_uri() + "?mode=ro", uri=True)
        try:
            for sql in ("SELECT * FROM meta", "SELECT id, data FROM blobs"):
                for _row in conn.execute(sql):
                    rows += 1
        finally:
            conn.close()
    return time.perf_counter() - started, rows


def child_task(task: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one in-process measurement in a fresh interpreter; its JSON answer."""
    out = run_process([sys.executable, str(HERE), task, *args], env or dict(os.environ)).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def _main(argv: list[str]) -> None:
    task = argv[0]
    if task == "floor":
        seconds, rows = floor_pass(Path(argv[1]))
        print(json.dumps({"seconds": seconds, "rows": rows}))
    elif task == "floor-cursor3":
        seconds, rows = floor_cursor3(Path(argv[1]), Path(argv[2]))
        print(json.dumps({"seconds": seconds, "rows": rows}))
    elif task == "incremental":
        from incremental import measure_incremental  # noqa: PLC0415

        db, cache, reps, layout = Path(argv[1]), Path(argv[2]), int(argv[3]), argv[4]
        print(json.dumps(measure_incremental(db, cache, reps, layout)))
    else:
        raise SystemExit(f"unknown task {task!r}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    _main(sys.argv[1:])
