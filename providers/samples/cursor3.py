"""A deterministic sample profile in Cursor 3.x's layout (demo, tests, benchmarks).

One global database as Cursor 3.15–3.22 leaves it: `_v:3` conversations with bubbles from
before the upgrade (the classic generator), a `composerHeaders` table, `_v:17` conversations
with bubbles and a root, `_v:18` root-only ones with their `agentKv:blob:<sha256>` rows,
meter-only and encrypted ones; and a Cursor home (`~/.cursor`) with agent transcripts and
Cursor Agent CLI `store.db` sessions. Records are written by the fixture writers
(cursor3_writer, cursor_agent_writer), never encoded here. Each conversation draws from its
own random stream and is written whole, in start order; bump `GENERATOR_VERSION` (in
sample_generator) whenever the output for a seed changes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from codeburn.providers import localtime
from codeburn.providers.localtime import iso_utc
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.generator import (
    MODELS,
    PROJECTS,
    SHELL_COMMANDS,
    WORDS,
    SampleInfo,
    SampleSpec,
    generate_sample_profile,
)
from codeburn.providers.samples.graph_writer import TurnSpec, json_message
from codeburn.providers.samples.home_writer import (
    AgentHomeWriter,
    assistant,
    shell,
    tool_result,
    turn_ended,
    user,
)
from codeburn.providers.samples.profile_writer import JournalMode, ProfileWriter
from codeburn.providers.samples.titles import sample_title

# How each IDE conversation is stored, in a cycle of 20 (one encrypted in 20).
KINDS: Final = (
    "root", "root-spread", "root", "bubbles", "root-messages",
    "root+transcript", "root", "transcript", "meter", "root-spread",
    "root", "transcript+meter", "root", "root-messages", "bubbles",
    "root", "root+transcript", "root-spread", "root", "encrypted",
)  # fmt: skip
SYSTEM_PROMPT: Final = "You are a coding agent working in the user's repository. " * 24
_SLUG: Final = re.compile(r"[^a-zA-Z0-9]")


@dataclass(frozen=True, slots=True)
class Cursor3Spec:
    seed: int = 11
    conversations: int = 40  # IDE conversations in the 3.x layout
    turns: tuple[int, int] = (2, 8)
    days: int = 28
    workspaces: int = 5
    user_chars: tuple[int, int] = (50, 2000)
    assistant_chars: tuple[int, int] = (200, 8000)
    cli_sessions: int = 4  # Cursor Agent CLI store.db sessions (every other with a transcript)
    cli_transcripts: int = 2  # CLI sessions known only by a flat transcript
    header_columns: Literal[9, 10] | None = 10  # None: Cursor 3.0–3.14, ItemTable headers only
    classic: int = 20  # `_v:3` conversations with bubbles, from before the upgrade
    classic_bubbles: tuple[int, int] = (6, 40)
    now_ms: int | None = None
    journal_mode: JournalMode = "wal"


@dataclass(slots=True)
class Cursor3Info:
    root: Path  # the Cursor data root (User/globalStorage/state.vscdb)
    db_path: Path
    home: Path  # the Cursor home (CODEBURN_CURSOR_HOME)
    kinds: dict[str, int] = field(default_factory=dict)  # IDE conversations per kind
    turns: int = 0  # turns written in the new layout (IDE, CLI, transcripts)
    bubbles: int = 0  # bubble rows, classic and `_v:17`
    blobs: int = 0  # distinct agentKv blob rows
    cli_sessions: int = 0
    transcripts: int = 0  # transcript files, subagents and legacy .txt included
    classic: SampleInfo | None = None


def slug(folder: str) -> str:
    """Cursor's transcript folder name for a workspace path (not reversible)."""
    return _SLUG.sub("-", folder).strip("-")


@dataclass(slots=True)
class _Turn:
    user: str
    replies: list[str]
    results: list[str]  # tool output fed back as context
    command: str
    ts: int


def _transcript(turns: list[_Turn]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for t in turns:
        records.append(user(t.user))
        records.append(assistant(t.replies[0], tools=[shell(t.command)]))
        records.extend(tool_result(r) for r in t.results)
        records.extend(assistant(r) for r in t.replies[1:])
        records.append(turn_ended())
    return records


def _prompts(turns: list[_Turn], model: str) -> list[dict[str, Any]]:
    """The prompt history blobs: a system prompt (shared by content), then each turn's messages."""
    out = [json_message("system", SYSTEM_PROMPT)]
    for t in turns:
        out.append(json_message("user", [{"type": "text", "text": t.user}]))
        call = {"type": "tool-call", "toolName": "Shell", "args": {"command": t.command}}
        blocks: list[dict[str, Any]] = [{"type": "text", "text": t.replies[0]}, call]
        out.append(json_message("assistant", blocks, model=model, created_at=iso_utc(t.ts)))
        out.extend(json_message("tool", [{"type": "text", "text": r}]) for r in t.results)
        out.extend(json_message("assistant", r, model=model) for r in t.replies[1:])
    return out


class _Cursor3Sample:
    def __init__(self, spec: Cursor3Spec, now_ms: int) -> None:
        self.spec = spec
        self.now_ms = now_ms
        words = random.Random(spec.seed)
        self.corpus = " ".join(words.choice(_WORDS) for _ in range(40_000))

    def rng(self, stream: str) -> random.Random:
        return random.Random(f"cursor3/{self.spec.seed}/{stream}")

    def text(self, rng: random.Random, bounds: tuple[int, int]) -> str:
        n = rng.randint(*bounds)
        start = rng.randrange(len(self.corpus) - n - 1)
        return self.corpus[start : start + n]

    def uid(self, rng: random.Random) -> str:
        h = f"{rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def start(self, rng: random.Random, recent: bool) -> int:
        span = 6 * 3600_000 if recent else self.spec.days * 86_400_000
        return self.now_ms - rng.randint(3600_000, max(span, 3600_001))

    def turns(self, rng: random.Random, start: int) -> list[_Turn]:
        spec, ts, out = self.spec, start, []
        for _ in range(rng.randint(*spec.turns)):
            ts += rng.randint(20_000, 240_000)
            replies = [self.text(rng, spec.assistant_chars) for _ in range(rng.randint(1, 2))]
            results = [self.text(rng, (100, 3000)) for _ in range(rng.randint(0, 2))]
            prompt = self.text(rng, spec.user_chars)
            out.append(_Turn(prompt, replies, results, rng.choice(SHELL_COMMANDS), ts))
        return out


_WORDS: Final = (*WORDS, "caf\u00e9", "\u2705")


def _turn_specs(turns: list[_Turn], kind: str) -> list[TurnSpec]:
    specs = []
    for i, t in enumerate(turns):
        timed = kind in ("root", "root+transcript", "encrypted", "cli")
        specs.append(
            TurnSpec(
                user=t.user,
                assistant=tuple(t.replies),
                user_ms=t.ts - 15_000 if kind == "root-messages" else None,
                timing_ms=t.ts if timed else None,
                text_in_blob=i % 3 == 2,  # long prompts live in a blob of their own
                tool_steps=len(t.results),
            )
        )
    return specs


def _where(sample: _Cursor3Sample, index: int) -> tuple[str, dict[str, Any], str | None]:
    """(project folder, composerData/header fields locating it, graph workspace URI)."""
    w = index % (sample.spec.workspaces + 1)
    folder = f"/home/dev/{PROJECTS[w % len(PROJECTS)]}"
    if w == sample.spec.workspaces:  # only the root knows the workspace (or nothing does)
        return folder, {}, f"file://{folder}" if (index // 6) % 2 else None
    if w % 3 == 0:
        return folder, {"folder": folder}, None
    if w % 3 == 1:
        return folder, {"workspace_id": f"ws3-{w:02d}"}, None
    return folder, {"tracked_repo": folder}, None


def _ide_conversation(
    sample: _Cursor3Sample,
    ide: Cursor3Writer,
    home: AgentHomeWriter,
    index: int,
    info: Cursor3Info,
) -> Header | None:
    spec, kind = sample.spec, KINDS[index % len(KINDS)]
    rng = sample.rng(f"ide/{index}")
    cid = sample.uid(rng)
    recent = index >= spec.conversations - max(2, spec.conversations // 30)
    start = sample.start(rng, recent)
    turns = sample.turns(rng, start)
    updated = turns[-1].ts + 5_000
    model = rng.choice(MODELS)
    folder, located, uri = _where(sample, index)
    meter = sum(len(t.user) + sum(map(len, t.results)) for t in turns) // 3
    title = sample_title(spec.seed, "ide", index)  # in the header and composerData, as Cursor
    composer: dict[str, Any] = {
        "created_ms": start,
        "updated_ms": updated,
        "model": "default" if index % 5 == 4 else model,
        **{k: v for k, v in located.items() if k != "workspace_id"},
        "extra": {"name": title},
    }
    if "workspace_id" in located:
        composer["workspace_id"] = located["workspace_id"]
    info.kinds[kind] = info.kinds.get(kind, 0) + 1
    if kind in ("transcript", "meter", "transcript+meter"):
        if kind != "transcript":
            composer["context_tokens_used"] = meter
        ide.composer(cid, version=18, state="~", **composer)
    elif kind == "bubbles":
        _bubbles(ide.profile, cid, turns, model, rng, sample.uid)
        info.bubbles += 2 * len(turns)
        ide.conversation(cid, _turn_specs(turns, kind), version=17, **composer)
    else:
        ide.conversation(
            cid,
            _turn_specs(turns, kind),
            prompts=_prompts(turns, model),
            used_tokens=meter if kind in ("root", "encrypted") else 0,
            started_ms=start,
            workspace_uris=(uri,) if uri else (),
            encrypt_root=kind == "encrypted" and index % 40 == 19,
            encrypt_blobs=kind == "encrypted" and index % 40 != 19,
            **composer,
        )
    info.turns += len(turns)
    if "transcript" in kind:
        home.transcript(cid, _transcript(turns), slug=slug(folder))
        info.transcripts += 1
        if kind == "transcript":  # a subagent it started: counted once, under its project
            child = sample.turns(rng, turns[0].ts)[:2]
            home.transcript(sample.uid(rng), _transcript(child), slug=slug(folder), parent_id=cid)
            info.transcripts += 1
            info.turns += len(child)
    header = Header(
        cid,
        workspace_id=located.get("workspace_id"),
        folder=located.get("folder"),
        created_ms=start,
        updated_ms=updated,
        name=title,
    )
    if index % 8 == 6 or not ide.columns:
        return header  # listed in ItemTable's headers only (Cursor 3.0–3.15)
    ide.header(header)
    return None


def _bubbles(
    profile: ProfileWriter,
    cid: str,
    turns: list[_Turn],
    model: str,
    rng: random.Random,
    uid: Callable[[random.Random], str],
) -> None:
    """`_v:17` with bubbles: the bubbles are the carrier, the root only a copy."""
    for t in turns:
        profile.bubble(cid, uid(rng), role="user", text=t.user, created_at=iso_utc(t.ts - 15_000))
        reply = "\n\n".join(t.replies)
        profile.bubble(
            cid, uid(rng), role="assistant", text=reply, created_at=iso_utc(t.ts), model=model
        )


def _cli(sample: _Cursor3Sample, home: AgentHomeWriter, info: Cursor3Info) -> None:
    spec = sample.spec
    for i in range(spec.cli_sessions):
        rng = sample.rng(f"cli/{i}")
        cid, start = sample.uid(rng), sample.start(rng, i == spec.cli_sessions - 1)
        turns = sample.turns(rng, start)
        folder = f"/home/dev/{PROJECTS[i % len(PROJECTS)]}"
        model = rng.choice(MODELS[:4])
        specs = _turn_specs(turns, "cli" if i % 2 else "cli-spread")
        home.cli_session(
            cid, specs, prompts=_prompts(turns, model), created_ms=start, model=model,
            workspace=folder, used_tokens=0 if i % 2 else len(turns) * 900,
            name=sample_title(spec.seed, "cli", i),
        )  # fmt: skip
        if i % 2 == 0:  # its transcript too: store.db wins
            home.transcript(cid, _transcript(turns), slug=slug(folder), flat=True)
            info.transcripts += 1
        info.cli_sessions += 1
        info.turns += len(turns)
    for i in range(spec.cli_transcripts):
        rng = sample.rng(f"cli-transcript/{i}")
        cid, start = sample.uid(rng), sample.start(rng, False)
        turns = sample.turns(rng, start)
        folder = f"/home/dev/{PROJECTS[(i + 2) % len(PROJECTS)]}"
        mtime = turns[-1].ts + 1_000
        home.transcript(cid, _transcript(turns), slug=slug(folder), flat=True, mtime_ms=mtime)
        if i == 0:  # an older .txt of the same id: the .jsonl wins
            home.legacy_transcript(cid, _legacy(turns), slug=slug(folder), mtime_ms=mtime)
            info.transcripts += 1
        info.transcripts += 1
        info.turns += len(turns)
    _decoy(home)


def _legacy(turns: list[_Turn]) -> str:
    lines = []
    for t in turns:
        lines += [f"user: {t.user}", f"A: {t.replies[0]}", "[Tool call] Shell", "[Tool result]"]
        lines += [f"A: {r}" for r in t.replies[1:]]
    return "\n".join(lines) + "\n"


def _decoy(home: AgentHomeWriter) -> None:
    """An MCP server's log under `projects/*/mcps/`: never a transcript."""
    folder = home.home / "projects" / "home-dev-infra" / "mcps" / "github"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "calls.jsonl").write_text('{"role":"user","message":{"content":[]}}\n')


def _workspaces(writer: ProfileWriter, spec: Cursor3Spec) -> None:
    for w in range(spec.workspaces):
        if w % 3 == 1:
            folder = f"file:///home/dev/{PROJECTS[w % len(PROJECTS)]}"
            writer.workspace(f"ws3-{w:02d}", folder=folder)


def _count_blobs(writer: ProfileWriter) -> int:
    row = writer.conn.execute(
        "SELECT count(*) FROM cursorDiskKV WHERE key >= 'agentKv:blob:' AND key < 'agentKv:blob;'"
    ).fetchone()
    return int(row[0])


def generate_cursor3_profile(
    root: Path,
    home: Path,
    spec: Cursor3Spec | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Cursor3Info:
    """Write a Cursor 3.x data root under `root` and a Cursor home under `home`.

    `progress(done, total)` reports IDE conversations written against the planned total.
    """
    spec = spec or Cursor3Spec()
    now_ms = spec.now_ms if spec.now_ms is not None else localtime.now_ms()
    info = Cursor3Info(
        root=root, db_path=root / "User" / "globalStorage" / "state.vscdb", home=home
    )
    if spec.classic:
        classic = SampleSpec(
            seed=spec.seed, conversations=spec.classic, bubbles=spec.classic_bubbles,
            days=spec.days, user_chars=spec.user_chars, assistant_chars=spec.assistant_chars,
            now_ms=now_ms, journal_mode=spec.journal_mode,
        )  # fmt: skip
        info.classic = generate_sample_profile(root, classic)
        info.bubbles = info.classic.bubbles
    sample = _Cursor3Sample(spec, now_ms)
    agent_home = AgentHomeWriter(home)
    with ProfileWriter(root, journal_mode=spec.journal_mode, bulk=True) as writer:
        ide = Cursor3Writer(writer, header_columns=spec.header_columns)
        listed: list[Header] = []
        for done, index in enumerate(_start_order(sample), 1):
            item_header = _ide_conversation(sample, ide, agent_home, index, info)
            if item_header is not None:
                listed.append(item_header)
            if progress is not None and done % 500 == 0:
                progress(done, spec.conversations)
        ide.item_headers(listed)
        writer.put_item("composer.composerHeaders.migratedToTable", "true")
        _workspaces(writer, spec)
        writer.flush()
        info.blobs = _count_blobs(writer)
    _cli(sample, agent_home, info)
    return info


def _start_order(sample: _Cursor3Sample) -> Iterator[int]:
    """Conversation indexes by start time (ROWIDs grow with time, as in Cursor)."""
    starts = []
    for index in range(sample.spec.conversations):
        rng = sample.rng(f"ide/{index}")
        sample.uid(rng)
        recent = index >= sample.spec.conversations - max(2, sample.spec.conversations // 30)
        starts.append((sample.start(rng, recent), index))
    return (index for _, index in sorted(starts))
