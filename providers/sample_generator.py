"""A deterministic sample Cursor profile with every input source (demo, tests, benchmarks)."""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final

from codeburn.providers.localtime import iso_utc
from codeburn.providers.sample_profile import JournalMode, ProfileWriter

MODELS: Final = (
    "claude-4.5-sonnet-thinking",
    "claude-4.6-sonnet",
    "gpt-5",
    "composer-1",
    "default",
    "gpt-5.1-codex-high",
    "claude-4.5-opus-high-thinking",
    "grok-code-fast-1",
)
PROJECTS: Final = ("web-app", "api-server", "infra", "ml-notebooks", "docs-site", "cli-tools")
LANGUAGES: Final = ("typescript", "python", "rust", "go", "shellscript", "plaintext", "json")
WORDS: Final = tuple(
    [
        "the",
        "function",
        "returns",
        "a",
        "value",
        "when",
        "request",
        "handler",
        "cache",
        "parse",
        "error",
        "test",
        "build",
        "refactor",
        "component",
        "state",
        "async",
        "await",
        "promise",
        "query",
        "database",
        "index",
        "migration",
        "schema",
        "type",
        "interface",
        "import",
        "export",
        "module",
        "config",
        "deploy",
        "container",
        "docker",
        "kubernetes",
        "log",
        "metric",
        "trace",
        "span",
        "user",
        "session",
        "token",
        "auth",
        "route",
        "middleware",
        "render",
        "hook",
        "effect",
        "memo",
        "reducer",
        "store",
    ]
)
SHELL_COMMANDS: Final = ("npm test", "git status && git diff", "pytest -q", "cargo build", "ls -la")
SOURCES: Final = ("bubbleTokens", "meter", "meter", "meter", "meter", "stream", "stream", "text")


@dataclass(frozen=True, slots=True)
class SampleSpec:
    seed: int = 7
    conversations: int = 150
    bubbles: tuple[int, int] = (6, 40)
    days: int = 28
    workspaces: int = 5
    user_chars: tuple[int, int] = (50, 2000)
    assistant_chars: tuple[int, int] = (200, 8000)
    stream_only_requests: int | None = None
    invalid_utf8_every: int = 97
    subcomposer_rows: int = 2
    undated_rows: int = 2
    now_ms: int | None = None
    journal_mode: JournalMode = "wal"


@dataclass(slots=True)
class SampleInfo:
    root: Path
    db_path: Path
    conversations: int = 0
    bubbles: int = 0
    agent_rows: int = 0
    stream_only_requests: int = 0
    sources: dict[str, int] = field(default_factory=dict)


class _Text:
    """Cheap realistic text: slices of one long random corpus."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.corpus = " ".join(rng.choice(WORDS) for _ in range(40_000))

    def make(self, bounds: tuple[int, int]) -> str:
        n = self.rng.randint(*bounds)
        start = self.rng.randrange(0, len(self.corpus) - n - 1)
        text = self.corpus[start : start + n]
        if self.rng.random() < 0.12:
            text = text[:-8] + " ✅ café"
        return text


def _bubble_extra(rng: random.Random, bubble_id: str, project: str) -> dict[str, Any]:
    files = [f"src/{project}/{rng.choice(WORDS)}_{i}.ts" for i in range(rng.randint(1, 6))]
    return {
        "bubbleId": bubble_id,
        "serverBubbleId": str(uuid.UUID(int=rng.getrandbits(128))),
        "isAgentic": rng.random() < 0.6,
        "unifiedMode": 2,
        "relevantFiles": files,
        "capabilities": [{"type": 15, "data": {"bubbleDataMap": "{}"}}],
    }


class _Generator:
    def __init__(self, root: Path, spec: SampleSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.text = _Text(self.rng)
        self.now_ms = spec.now_ms if spec.now_ms is not None else time.time_ns() // 1_000_000
        self.writer = ProfileWriter(root, journal_mode=spec.journal_mode)
        self.info = SampleInfo(root=root, db_path=self.writer.db_path)
        self.events: list[tuple[int, int, Callable[[], None]]] = []
        self.workspace_members: dict[int, list[str]] = {}

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128)))

    def at(self, ts: int, action: Callable[[], None]) -> None:
        self.events.append((ts, len(self.events), action))

    def conversation(self, index: int) -> None:
        spec, rng = self.spec, self.rng
        composer = self.uid()
        source = SOURCES[index % len(SOURCES)]
        self.info.sources[source] = self.info.sources.get(source, 0) + 1
        recent = index >= spec.conversations - max(3, spec.conversations // 30)
        span = 6 * 3600_000 if recent else spec.days * 86_400_000
        start = self.now_ms - rng.randint(3600_000, max(span, 3600_001))
        model = rng.choice(MODELS)
        workspace = index % (spec.workspaces + 1)
        self.workspace_members.setdefault(workspace, []).append(composer)
        project = PROJECTS[workspace % len(PROJECTS)]
        count = rng.randint(*spec.bubbles)
        ts = start
        meter = 0
        for n in range(count):
            ts += rng.randint(5_000, 90_000)
            user = n % 2 == 0
            request = self.uid() if user and source in ("stream", "bubbleTokens") else None
            bubble_id = self.uid()
            text = self.text.make(spec.user_chars if user else spec.assistant_chars)
            meter += len(text) // 3
            tokens = (len(text) // 4, 0) if user else (0, len(text) // 4)
            fields: dict[str, Any] = {
                "role": "user" if user else "assistant",
                "text": text,
                "created_at": iso_utc(ts),
                "request_id": request,
                "model": None if user else model,
                "languages": rng.sample(LANGUAGES, 2) if not user and rng.random() < 0.3 else (),
                "extra": _bubble_extra(rng, bubble_id, project),
            }
            if source == "bubbleTokens":
                fields["input_tokens"], fields["output_tokens"] = tokens
            key = f"bubbleId:{composer}:{bubble_id}"
            value = ProfileWriter.bubble_value(**fields)
            self.info.bubbles += 1
            if spec.invalid_utf8_every and self.info.bubbles % spec.invalid_utf8_every == 0:
                self.at(ts, partial(self.writer.put, key, _truncated_utf8(value)))
            else:
                self.at(ts, partial(self.writer.put, key, value))
            if request and source == "stream":
                self.stream_turn(ts, request, text, model)
        meta: dict[str, Any] = {"created_at_ms": start}
        if source == "meter":
            meta["total_used_tokens" if index % 3 else "context_tokens_used"] = meter
        self.at(start, partial(self.writer.composer, composer, **meta))
        self.at(ts, partial(self.writer.composer, composer, **meta))
        self.info.conversations += 1

    def stream_turn(self, ts: int, request: str, prompt: str, model: str) -> None:
        rng = self.rng
        blobs: list[dict[str, Any]] = [
            {"role": "system", "content": self.text.make((800, 3000))},
            {"role": "user", "content": prompt, "request_id": request, "model": model},
        ]
        for _ in range(rng.randint(0, 3)):
            blobs.append(
                {"role": "tool", "content": [{"type": "text", "text": self.text.make((300, 4000))}]}
            )
        call = {
            "type": "tool-call",
            "toolName": "Shell",
            "args": {"command": rng.choice(SHELL_COMMANDS)},
        }
        blobs.append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": self.text.make((100, 1500))}, call],
            }
        )
        for blob in blobs:
            blob_id = self.uid()
            self.info.agent_rows += 1
            self.at(ts, partial(self.writer.agent, blob_id, **blob))

    def stream_only(self) -> None:
        request = self.uid()
        ts = self.now_ms - self.rng.randint(60_000, self.spec.days * 86_400_000)
        self.stream_turn(ts, request, self.text.make(self.spec.user_chars), "claude-4.6-sonnet")
        self.info.stream_only_requests += 1

    def oddities(self) -> None:
        for i in range(self.spec.subcomposer_rows):
            key = f"bubbleId:task-call_{i}\nfc_{self.uid()[:8]}:{self.uid()}"
            value = ProfileWriter.bubble_value(
                role="assistant", text="tool call", created_at=iso_utc(self.now_ms - 7_200_000)
            )
            self.at(self.now_ms - 7_200_000, partial(self.writer.put, key, value))
        for i in range(self.spec.undated_rows):
            key = f"bubbleId:{self.uid()}:{self.uid()}"
            value = ProfileWriter.bubble_value(
                role="assistant", text="numeric date", created_at=1_700_000_000_000 + i
            )
            self.at(self.now_ms - 3_600_000, partial(self.writer.put, key, value))

    def workspaces(self) -> None:
        for index, members in sorted(self.workspace_members.items()):
            if index == self.spec.workspaces:
                continue  # these conversations stay unmapped: project "cursor"
            project = PROJECTS[index % len(PROJECTS)]
            if index == 1:
                self.writer.workspace(
                    f"ws{index:02d}",
                    folder=f"vscode-remote://wsl+Ubuntu/home/dev/{project}",
                    composers=members,
                )
            elif index == 2:
                self.writer.workspace(
                    f"ws{index:02d}", folder=f"file:///home/dev/{project}", headers=members
                )
            else:
                self.writer.workspace(
                    f"ws{index:02d}", folder=f"file:///home/dev/{project}", composers=members
                )
        self.writer.workspace("ws-multi", multi_root=True, composers=[])

    def run(self, progress: Callable[[int, int], None] | None) -> SampleInfo:
        for index in range(self.spec.conversations):
            self.conversation(index)
        for _ in range(
            self.spec.stream_only_requests
            if self.spec.stream_only_requests is not None
            else max(1, self.spec.conversations // 25)
        ):
            self.stream_only()
        self.oddities()
        self.events.sort(key=lambda e: (e[0], e[1]))
        total = len(self.events)
        for done, (_, _, action) in enumerate(self.events, 1):
            action()
            if progress is not None and done % 20_000 == 0:
                progress(done, total)
        self.writer.flush()
        self.workspaces()
        self.writer.close()
        return self.info


def _truncated_utf8(value: dict[str, Any]) -> bytes:
    """Cursor sometimes stores a multi-byte character cut in half: keep the bytes invalid."""
    marker = "\u0001CUT\u0001"
    value = dict(value, text=str(value.get("text", "")) + marker)
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return raw.replace(json.dumps(marker)[1:-1].encode(), b"\xe2\x82")


def generate_sample_profile(
    root: Path, spec: SampleSpec | None = None, progress: Callable[[int, int], None] | None = None
) -> SampleInfo:
    """Write a sample Cursor data root under `root` and describe what is in it."""
    return _Generator(root, spec or SampleSpec()).run(progress)


EXPORT_HEADER: Final = (
    "Date,Cloud Agent ID,Automation ID,Kind,Model,Max Mode,Input (w/ Cache Write),"
    "Input (w/o Cache Write),Cache Read,Output Tokens,Total Tokens,Cost"
)
EXPORT_MODELS: Final = (
    "auto",
    "claude-4.6-sonnet",
    "gpt-5",
    "composer-1",
    "claude-opus-5-thinking-high",
)


def write_sample_export(path: Path, first_ms: int, last_ms: int, *, seed: int = 3) -> int:
    """A Cursor usage export (CSV) with realistic rows between two times; returns the row count."""
    rng = random.Random(seed)
    lines = [EXPORT_HEADER]
    ts = first_ms
    rows = 0
    while True:
        ts += rng.randint(4 * 60_000, 50 * 60_000)
        if ts > last_ms:
            break
        model = rng.choice(EXPORT_MODELS)
        write = rng.randint(0, 4000)
        fresh = rng.randint(200, 9000)
        cached = rng.randint(5_000, 120_000)
        out = rng.randint(50, 3000)
        billed = model == "claude-opus-5-thinking-high"
        cost = f"${rng.uniform(0.2, 1.5):.2f}" if billed else "Included"
        kind = "On-Demand" if billed else "Included in Pro"
        total = write + fresh + cached + out
        lines.append(
            f"{iso_utc(ts)},,,{kind},{model},No,{write},{fresh},{cached},{out},{total},{cost}"
        )
        rows += 1
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return rows
