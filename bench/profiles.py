"""Synthetic Cursor profiles for the benchmark, generated once and cached under bench/.data/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Final, Literal

from codeburn.providers import localtime
from codeburn.providers.samples.cursor3 import Cursor3Spec, generate_cursor3_profile
from codeburn.providers.samples.generator import (
    GENERATOR_VERSION,
    SampleSpec,
    generate_sample_profile,
)
from codeburn.providers.samples.header_index import add_header_index

DATA_DIR: Final = Path(__file__).resolve().parent / ".data"
BUBBLES_PER_CONVERSATION: Final = 50
TURNS_PER_CONVERSATION: Final = 20
CLASSIC_SHARE: Final = 5  # 1/5 of a Cursor 3.x profile's messages are old `_v:3` bubbles
# "headers": the bubbles profile with the ItemTable header key every Cursor since 3.0 writes
# (a 3.x user whose history is still bubbles); "headers-roots": and root-only conversations
# for 5 % of its conversations.
Layout = Literal["bubbles", "cursor3", "headers", "headers-roots"]
LAYOUTS: Final[tuple[Layout, ...]] = ("bubbles", "cursor3", "headers", "headers-roots")
BUBBLE_LAYOUTS: Final = ("bubbles", "headers", "headers-roots")  # floor: the bubble floor
ROOTS_PERCENT: Final = 5
SPREAD_DAYS: Final = 120  # well inside the six-month window
MAX_AGE_DAYS: Final = 30  # older data drifts towards the window's edge: generate again


@dataclass(frozen=True, slots=True)
class Profile:
    """A generated Cursor data root (and Cursor home) and what is in it."""

    layout: Layout
    bubbles: int  # messages: bubbles, or for Cursor 3.x bubbles + 2 per turn
    seed: int
    root: Path
    db_path: Path
    home: Path  # the Cursor home (transcripts, CLI stores); empty for the bubbles layout
    agent_rows: int  # agentKv rows: stream records, or the 3.x layout's blobs
    conversations: int
    size_bytes: int
    generated_s: float | None  # None when it came from the cache

    @property
    def floor_task(self) -> list[str]:
        """The `measure.py` task of this profile's floor (bubbles: the bubble floor)."""
        if self.layout in BUBBLE_LAYOUTS:
            return ["floor", str(self.db_path)]
        return ["floor-cursor3", str(self.db_path), str(self.home)]


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


def cursor3_spec_for(messages: int, seed: int) -> Cursor3Spec:
    """A Cursor 3.x profile of ≈ `messages` messages: 1/5 old bubbles (conversations of 50),
    the rest conversations of 20 turns (user + assistant) in every 3.x representation, 1 CLI
    session per 50 IDE conversations and 1 CLI transcript per 100."""
    conversations = max(1, messages * (CLASSIC_SHARE - 1) // CLASSIC_SHARE) // (
        2 * TURNS_PER_CONVERSATION
    )
    per = BUBBLES_PER_CONVERSATION
    return Cursor3Spec(
        seed=seed,
        conversations=conversations,
        turns=(TURNS_PER_CONVERSATION, TURNS_PER_CONVERSATION),
        days=SPREAD_DAYS,
        cli_sessions=max(1, conversations // 50),
        cli_transcripts=max(1, conversations // 100),
        classic=max(1, messages // CLASSIC_SHARE // per),
        classic_bubbles=(per, per),
    )


def cache_key(bubbles: int, seed: int, layout: Layout = "bubbles") -> str:
    prefix = "cursor" if layout == "bubbles" else layout
    return f"{prefix}-n{bubbles}-s{seed}-g{GENERATOR_VERSION}"


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\r  generating: {done:,} / {total:,}")
    sys.stderr.flush()


def _load(folder: Path, bubbles: int, seed: int, layout: Layout) -> Profile | None:
    try:
        meta = json.loads((folder / "profile.json").read_text())
    except (OSError, ValueError):
        return None
    db = folder / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    if not db.is_file() or time.time() - meta.get("createdAt", 0) > MAX_AGE_DAYS * 86_400:
        return None
    (folder / "home").mkdir(exist_ok=True)  # the bubbles layout has an empty Cursor home
    return Profile(
        layout=layout,
        bubbles=bubbles,
        seed=seed,
        root=folder / "Cursor",
        db_path=db,
        home=folder / "home",
        agent_rows=int(meta["agentRows"]),
        conversations=int(meta["conversations"]),
        size_bytes=db.stat().st_size,
        generated_s=None,
    )


def ensure_profile(
    bubbles: int, seed: int, *, layout: Layout = "bubbles", regenerate: bool = False
) -> Profile:
    """The cached profile for (layout, size, seed, generator version), generated when missing."""
    folder = DATA_DIR / cache_key(bubbles, seed, layout)
    if not regenerate and (cached := _load(folder, bubbles, seed, layout)) is not None:
        return cached
    for stale in DATA_DIR.glob(cache_key(bubbles, seed, layout).rsplit("-g", 1)[0] + "-g*"):
        shutil.rmtree(stale, ignore_errors=True)
    building = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(building, ignore_errors=True)
    started = time.perf_counter()
    # In a child process: Linux reports a child's peak RSS as at least what its parent held
    # when it forked, so the bench process itself must stay small.
    script = str(Path(__file__).resolve())
    subprocess.run(
        [sys.executable, script, layout, str(bubbles), str(seed), str(building)], check=True
    )
    elapsed = time.perf_counter() - started
    building.rename(folder)  # a half-written profile is never picked up
    # Written back before anything is timed: the kernel writes a new profile's 0.5-1.6 GB
    # back some 30 s later, in the middle of the timed runs, unless told to now.
    os.sync()
    profile = _load(folder, bubbles, seed, layout)
    assert profile is not None
    return Profile(**{**asdict(profile), "generated_s": elapsed})


def working_copy(profile: Profile, into: Path) -> tuple[Path, Path]:
    """A private copy of a profile's data root and home (for runs that write to them):
    (database, home)."""
    target = into / "Cursor"
    shutil.copytree(profile.root, target)
    shutil.copytree(profile.home, into / "home")
    return target / "User" / "globalStorage" / "state.vscdb", into / "home"


def _generate(layout: str, bubbles: int, seed: int, building: Path) -> None:
    started = time.perf_counter()
    meta: dict[str, object]
    (building / "home").mkdir(parents=True)
    if layout == "cursor3":
        spec3 = cursor3_spec_for(bubbles, seed)
        info3 = generate_cursor3_profile(
            building / "Cursor", building / "home", spec3, progress=_progress
        )
        meta = {
            "spec": {k: v for k, v in asdict(spec3).items() if k != "now_ms"},
            "bubbles": info3.bubbles,
            "turns": info3.turns,
            "agentRows": info3.blobs,
            "conversations": sum(info3.kinds.values())
            + info3.cli_sessions
            + (info3.classic.conversations if info3.classic else 0),
            "kinds": info3.kinds,
            "cliSessions": info3.cli_sessions,
            "transcripts": info3.transcripts,
        }
    else:
        now = localtime.now_ms()
        spec = replace(spec_for(bubbles, seed), now_ms=now)
        info = generate_sample_profile(building / "Cursor", spec, progress=_progress)
        meta = {
            "spec": {k: v for k, v in asdict(spec).items() if k != "now_ms"},
            "bubbles": info.bubbles,
            "agentRows": info.agent_rows,
            "conversations": info.conversations,
            "sources": info.sources,
        }
        if layout in ("headers", "headers-roots"):
            roots = info.conversations * ROOTS_PERCENT // 100 if layout == "headers-roots" else 0
            extra = add_header_index(
                building / "Cursor", seed=seed, now_ms=now, days=SPREAD_DAYS, roots=roots,
                turns=(TURNS_PER_CONVERSATION, TURNS_PER_CONVERSATION),
            )  # fmt: skip
            meta.update(
                agentRows=info.agent_rows + extra.blobs,
                conversations=info.conversations + extra.roots,
                listed=extra.listed,
                roots=extra.roots,
                rootTurns=extra.turns,
            )
    sys.stderr.write("\r" + " " * 60 + "\r")
    meta.update(createdAt=time.time(), generatedSeconds=time.perf_counter() - started)
    (building / "profile.json").write_text(json.dumps(meta, indent=2))


if __name__ == "__main__":
    _generate(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
