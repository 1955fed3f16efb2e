"""A deterministic sample Cursor profile with every input source (demo, tests, benchmarks).

Each conversation draws from its own random stream, so rows can be produced lazily and merged
in time order (Cursor's ROWIDs grow with time) without holding the whole profile in memory;
values are JSON written by hand (the texts never need escaping), which keeps a 300,000-message
profile to seconds. Bump `GENERATOR_VERSION` whenever the output for a seed changes.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from codeburn.providers.calls import CHARS_PER_TOKEN
from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.providers.samples.profile_writer import JournalMode, ProfileWriter
from codeburn.providers.samples.titles import sample_title

# 3: the Cursor 3.x profile; 4: its shared blobs written once; 5: conversation titles
GENERATOR_VERSION: Final = 5
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
_WORD_LIST: Final = """the function returns a value when request handler cache parse error test
    build refactor component state async await promise query database index migration schema type
    interface import export module config deploy container docker kubernetes log metric trace
    span user session token auth route middleware render hook effect memo reducer store"""
WORDS: Final = tuple(_WORD_LIST.split())
SHELL_COMMANDS: Final = ("npm test", "git status && git diff", "pytest -q", "cargo build", "ls -la")
SOURCES: Final = ("bubbleTokens", "meter", "meter", "meter", "meter", "stream", "stream", "text")
_CUT: Final = b"\xe2\x82"  # a multi-byte character cut in half, as Cursor sometimes stores
_CAPABILITIES: Final = '[{"type":15,"data":{"bubbleDataMap":"{}"}}]'


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


# (time, stream, sequence, key, value): the first three order the merge and are unique.
Row = tuple[int, int, int, str, str | bytes]


def _uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _pick(rng: random.Random, items: tuple[str, ...]) -> str:
    return items[int(rng.random() * len(items))]


def _between(rng: random.Random, bounds: tuple[int, int]) -> int:
    lo, hi = bounds
    return lo + int(rng.random() * (hi - lo + 1))


class _Corpus:
    """Cheap realistic text: slices of one long random corpus (letters, spaces, a few emoji)."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.text = " ".join(_pick(rng, WORDS) for _ in range(40_000))

    def make(self, rng: random.Random, bounds: tuple[int, int]) -> str:
        n = _between(rng, bounds)
        start = int(rng.random() * (len(self.text) - n - 1))
        text = self.text[start : start + n]
        if rng.random() < 0.12:
            text = text[:-8] + " \u2705 caf\u00e9"
        return text


def _agent_value(role: str, content: str, request: str | None = None, model: str = "") -> str:
    options = f',"providerOptions":{{"cursor":{{"requestId":"{request}","modelName":"{model}"}}}}'
    return f'{{"role":"{role}","content":{content}{options if request else ""}}}'


class _Sample:
    """Plans the profile, then yields its rows in time order."""

    def __init__(self, spec: SampleSpec) -> None:
        self.spec = spec
        self.now_ms = spec.now_ms if spec.now_ms is not None else now_ms()
        self.corpus = _Corpus(spec.seed)
        self.bubble_count = 0
        self.workspace_members: dict[int, list[str]] = {}
        self.info_sources: dict[str, int] = {}
        self.agent_rows = 0

    def rng(self, stream: int) -> random.Random:
        return random.Random(f"{self.spec.seed}/{stream}")

    def rows(self) -> Iterator[Row]:
        spec = self.spec
        streams: list[Iterator[Row]] = [self.conversation(i) for i in range(spec.conversations)]
        extra = spec.stream_only_requests
        for i in range(max(1, spec.conversations // 25) if extra is None else extra):
            streams.append(self.stream_only(spec.conversations + i))
        streams.append(iter(self.oddities()))
        return heapq.merge(*streams)

    def conversation(self, index: int) -> Iterator[Row]:
        spec, rng, corpus = self.spec, self.rng(index), self.corpus
        composer = _uid(rng)
        source = SOURCES[index % len(SOURCES)]
        self.info_sources[source] = self.info_sources.get(source, 0) + 1
        recent = index >= spec.conversations - max(3, spec.conversations // 30)
        span = 6 * 3600_000 if recent else spec.days * 86_400_000
        start = self.now_ms - _between(rng, (3600_000, max(span, 3600_001)))
        model = _pick(rng, MODELS)
        workspace = index % (spec.workspaces + 1)
        self.workspace_members.setdefault(workspace, []).append(composer)
        project = PROJECTS[workspace % len(PROJECTS)]
        count = _between(rng, spec.bubbles)
        title = sample_title(spec.seed, "bubbles", index)  # composerData `name`, as Cursor's
        meta = f'"composerId":"{composer}","name":"{title}","createdAt":{start}'
        seq = 0
        yield start, index, seq, f"composerData:{composer}", f'{{"_v":10,{meta}}}'
        ts, meter = start, 0
        for n in range(count):
            ts += _between(rng, (5_000, 90_000))
            user = n % 2 == 0
            text = corpus.make(rng, spec.user_chars if user else spec.assistant_chars)
            meter += len(text) // 3
            request = _uid(rng) if user and source in ("stream", "bubbleTokens") else None
            key, value = self.bubble(rng, composer, project, model, source, user, text, ts, request)
            seq += 1
            yield ts, index, seq, key, value
            if request and source == "stream":
                for key, value in self.stream_turn(rng, request, text, model):
                    seq += 1
                    yield ts, index, seq, key, value
        if source == "meter":
            meta += (
                f',"promptTokenBreakdown":{{"totalUsedTokens":{meter}}}'
                if index % 3
                else (f',"contextTokensUsed":{meter}')
            )
        yield ts, index, seq + 1, f"composerData:{composer}", f'{{"_v":10,{meta}}}'

    def bubble(
        self,
        rng: random.Random,
        composer: str,
        project: str,
        model: str,
        source: str,
        user: bool,
        text: str,
        ts: int,
        request: str | None,
    ) -> tuple[str, str | bytes]:
        bubble_id = _uid(rng)
        counted = len(text) // CHARS_PER_TOKEN  # (Cursor's own count: rounded down)
        tokens = (counted, 0) if user else (0, counted)
        tin, tout = tokens if source == "bubbleTokens" else (0, 0)
        head = f'{{"_v":3,"type":{1 if user else 2},"text":"{text}'
        tail = f'","tokenCount":{{"inputTokens":{tin},"outputTokens":{tout}}}'
        tail += f',"createdAt":"{iso_utc(ts)}"'
        if request:
            tail += f',"requestId":"{request}"'
        if not user:
            tail += f',"modelInfo":{{"modelName":"{model}"}}'
            if rng.random() < 0.3:
                blocks = ",".join(
                    f'{{"languageId":"{lang}","codeBlockIdx":{i}}}'
                    for i, lang in enumerate(rng.sample(LANGUAGES, 2))
                )
                tail += f',"codeBlocks":[{blocks}]'
        files = ",".join(
            f'"src/{project}/{_pick(rng, WORDS)}_{i}.ts"' for i in range(_between(rng, (1, 6)))
        )
        agentic = "true" if rng.random() < 0.6 else "false"
        tail += (
            f',"bubbleId":"{bubble_id}","serverBubbleId":"{_uid(rng)}","isAgentic":{agentic}'
            f',"unifiedMode":2,"relevantFiles":[{files}],"capabilities":{_CAPABILITIES}}}'
        )
        self.bubble_count += 1
        key = f"bubbleId:{composer}:{bubble_id}"
        every = self.spec.invalid_utf8_every
        if every and self.bubble_count % every == 0:
            return key, head.encode() + _CUT + tail.encode()
        return key, head + tail

    def stream_turn(
        self, rng: random.Random, request: str, prompt: str, model: str
    ) -> Iterator[tuple[str, str]]:
        corpus = self.corpus
        blocks = [
            _agent_value("system", f'"{corpus.make(rng, (800, 3000))}"'),
            _agent_value("user", f'"{prompt}"', request, model),
        ]
        for _ in range(_between(rng, (0, 3))):
            text = corpus.make(rng, (300, 4000))
            blocks.append(_agent_value("tool", f'[{{"type":"text","text":"{text}"}}]'))
        reply = corpus.make(rng, (100, 1500))
        command = _pick(rng, SHELL_COMMANDS)
        call = f'{{"type":"tool-call","toolName":"Shell","args":{{"command":"{command}"}}}}'
        blocks.append(_agent_value("assistant", f'[{{"type":"text","text":"{reply}"}},{call}]'))
        for value in blocks:
            self.agent_rows += 1
            yield f"agentKv:blob:{_uid(rng)}", value

    def stream_only(self, stream: int) -> Iterator[Row]:
        rng = self.rng(stream)
        ts = self.now_ms - _between(rng, (60_000, self.spec.days * 86_400_000))
        prompt = self.corpus.make(rng, self.spec.user_chars)
        turn = self.stream_turn(rng, _uid(rng), prompt, "claude-4.6-sonnet")
        for seq, (key, value) in enumerate(turn):
            yield ts, stream, seq, key, value

    def oddities(self) -> list[Row]:
        rng, at, rows = self.rng(-1), self.now_ms - 7_200_000, []
        for i in range(self.spec.subcomposer_rows):
            key = f"bubbleId:task-call_{i}\nfc_{_uid(rng)[:8]}:{_uid(rng)}"
            value = ProfileWriter.bubble_value(
                role="assistant", text="tool call", created_at=iso_utc(at)
            )
            rows.append((at, -1, i, key, json.dumps(value)))
        for i in range(self.spec.undated_rows):
            key = f"bubbleId:{_uid(rng)}:{_uid(rng)}"
            value = ProfileWriter.bubble_value(
                role="assistant", text="numeric date", created_at=1_700_000_000_000 + i
            )
            rows.append((self.now_ms - 3_600_000, -1, 100 + i, key, json.dumps(value)))
        return sorted(rows)


def _write_workspaces(writer: ProfileWriter, sample: _Sample) -> None:
    for index, members in sorted(sample.workspace_members.items()):
        if index == sample.spec.workspaces:
            continue  # these conversations stay unmapped: project "cursor"
        project = PROJECTS[index % len(PROJECTS)]
        name = f"ws{index:02d}"
        if index == 1:
            folder = f"vscode-remote://wsl+Ubuntu/home/dev/{project}"
            writer.workspace(name, folder=folder, composers=members)
        elif index == 2:
            writer.workspace(name, folder=f"file:///home/dev/{project}", headers=members)
        else:
            writer.workspace(name, folder=f"file:///home/dev/{project}", composers=members)
    writer.workspace("ws-multi", multi_root=True, composers=[])


def generate_sample_profile(
    root: Path, spec: SampleSpec | None = None, progress: Callable[[int, int], None] | None = None
) -> SampleInfo:
    """Write a sample Cursor data root under `root` and describe what is in it.

    `progress(done, total)` reports written bubbles against the planned total (≈ bubbles).
    """
    spec = spec or SampleSpec()
    sample = _Sample(spec)
    planned = spec.conversations * (spec.bubbles[0] + spec.bubbles[1]) // 2
    with ProfileWriter(root, journal_mode=spec.journal_mode, bulk=True) as writer:
        reported = 0
        for _, _, _, key, value in sample.rows():
            writer.put(key, value)
            done = sample.bubble_count
            if progress is not None and done % 20_000 == 0 and done != reported:
                progress(done, max(planned, done))
                reported = done
        writer.flush()
        _write_workspaces(writer, sample)
        info = SampleInfo(root=root, db_path=writer.db_path)
    info.conversations = spec.conversations
    info.bubbles = sample.bubble_count
    info.agent_rows = sample.agent_rows
    extra = spec.stream_only_requests
    info.stream_only_requests = max(1, spec.conversations // 25) if extra is None else extra
    info.sources = dict(sample.info_sources)
    return info


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


def write_sample_export(
    path: Path,
    first_ms: int,
    last_ms: int,
    *,
    seed: int = 3,
    turns: Sequence[tuple[int, int, str]] = (),
) -> int:
    """A Cursor usage export (CSV) with realistic rows between two times; returns the row count.

    With `turns` (start, end, model of local turns), each row is stamped at a point inside one
    of them with its model, as Cursor bills a request of that turn; else rows come every few
    minutes with models of their own."""
    rng = random.Random(seed)
    lines = [EXPORT_HEADER]
    rows = 0
    for ts, model in _export_moments(rng, first_ms, last_ms, turns):
        write = rng.randint(0, 4000)
        fresh = rng.randint(200, 9000)
        cached = rng.randint(5_000, 120_000)
        out = rng.randint(50, 3000)
        billed = model == "claude-opus-5-thinking-high" or (bool(turns) and rng.random() < 0.3)
        cost = f"${rng.uniform(0.2, 1.5):.2f}" if billed else "Included"
        kind = "On-Demand" if billed else "Included in Pro"
        total = write + fresh + cached + out
        lines.append(
            f"{iso_utc(ts)},,,{kind},{model},No,{write},{fresh},{cached},{out},{total},{cost}"
        )
        rows += 1
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return rows


def _export_moments(
    rng: random.Random, first_ms: int, last_ms: int, turns: Sequence[tuple[int, int, str]]
) -> Iterator[tuple[int, str]]:
    """(epoch ms, model) of each export row, in time order."""
    if turns:
        inside = sorted(t for t in turns if first_ms <= t[0] and t[1] <= last_ms)
        for start, end, model in inside:
            yield rng.randint(start, max(start, end)), model
        return
    ts = first_ms
    while True:
        ts += rng.randint(4 * 60_000, 50 * 60_000)
        if ts > last_ms:
            return
        yield ts, rng.choice(EXPORT_MODELS)
