"""Synthetic Cursor profiles for the benchmark, generated once and cached under bench/.data/."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from codeburn.providers.sample_generator import (
    GENERATOR_VERSION,
    SampleInfo,
    SampleSpec,
    generate_sample_profile,
)

DATA_DIR: Final = Path(__file__).resolve().parent / ".data"
BUBBLES_PER_CONVERSATION: Final = 50
SPREAD_DAYS: Final = 120  # well inside the six-month window
MAX_AGE_DAYS: Final = 30  # older data drifts towards the window's edge: generate again


@dataclass(frozen=True, slots=True)
class Profile:
    """A generated Cursor data root and what is in it."""

    bubbles: int
    seed: int
    root: Path
    db_path: Path
    agent_rows: int
    conversations: int
    size_bytes: int
    generated_s: float | None  # None when it came from the cache


def spec_for(bubbles: int, seed: int) -> SampleSpec:
    """≈ bubbles / 50 conversations of 50 messages, all four input sources, stream rows,
    workspaces, sub-composer rows and invalid UTF-8 (the generator's defaults)."""
    per = BUBBLES_PER_CONVERSATION
    return SampleSpec(
        seed=seed,
        conversations=max(1, bubbles // per),
        bubbles=(per, per),
        days=SPREAD_DAYS,
        user_chars=(50, 2000),
        assistant_chars=(200, 8000),
    )


def cache_key(bubbles: int, seed: int) -> str:
    return f"cursor-n{bubbles}-s{seed}-g{GENERATOR_VERSION}"


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\r  generating: {done:,} / {total:,} messages")
    sys.stderr.flush()


def _load(folder: Path, bubbles: int, seed: int) -> Profile | None:
    try:
        meta = json.loads((folder / "profile.json").read_text())
    except (OSError, ValueError):
        return None
    db = folder / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    if not db.is_file() or time.time() - meta.get("createdAt", 0) > MAX_AGE_DAYS * 86_400:
        return None
    return Profile(
        bubbles=bubbles,
        seed=seed,
        root=folder / "Cursor",
        db_path=db,
        agent_rows=int(meta["agentRows"]),
        conversations=int(meta["conversations"]),
        size_bytes=db.stat().st_size,
        generated_s=None,
    )


def ensure_profile(bubbles: int, seed: int, *, regenerate: bool = False) -> Profile:
    """The cached profile for (size, seed, generator version), generated when missing."""
    folder = DATA_DIR / cache_key(bubbles, seed)
    if not regenerate and (cached := _load(folder, bubbles, seed)) is not None:
        return cached
    for stale in DATA_DIR.glob(f"cursor-n{bubbles}-s{seed}-g*"):
        shutil.rmtree(stale, ignore_errors=True)
    building = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(building, ignore_errors=True)
    started = time.perf_counter()
    # In a child process: Linux reports a child's peak RSS as at least what its parent held
    # when it forked, so the bench process itself must stay small.
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), str(bubbles), str(seed), str(building)],
        check=True,
    )
    elapsed = time.perf_counter() - started
    building.rename(folder)  # a half-written profile is never picked up
    profile = _load(folder, bubbles, seed)
    assert profile is not None
    return Profile(**{**asdict(profile), "generated_s": elapsed})


def working_copy(profile: Profile, into: Path) -> Path:
    """A private copy of a profile's data root (for runs that write to the database)."""
    target = into / "Cursor"
    shutil.copytree(profile.root, target)
    return target / "User" / "globalStorage" / "state.vscdb"


def _generate(bubbles: int, seed: int, building: Path) -> None:
    started = time.perf_counter()
    info: SampleInfo = generate_sample_profile(
        building / "Cursor", spec_for(bubbles, seed), progress=_progress
    )
    sys.stderr.write("\r" + " " * 60 + "\r")
    meta = {
        "createdAt": time.time(),
        "spec": {k: v for k, v in asdict(spec_for(bubbles, seed)).items() if k != "now_ms"},
        "bubbles": info.bubbles,
        "agentRows": info.agent_rows,
        "conversations": info.conversations,
        "sources": info.sources,
        "generatedSeconds": time.perf_counter() - started,
    }
    (building / "profile.json").write_text(json.dumps(meta, indent=2))


if __name__ == "__main__":
    _generate(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
