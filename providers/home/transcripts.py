"""Agent transcripts under `~/.cursor/projects/*/agent-transcripts/` → turns of characters.

Written by the IDE agent and by the Cursor Agent CLI. A transcript has no ids, models, usage or
timestamps: each turn only says how much was said, which is estimated like the agent stream
(chars ÷ 4, docs/local-data.md#calls-emitted). A user message opens a turn; `turn_ended` closes it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

# The agent formats on first use: a status only lists files.
import codeburn.providers.agent as agent_formats

if TYPE_CHECKING:
    from codeburn.providers.agent import GraphTurn, StreamRequest
TRANSCRIPTS_DIR: Final = "agent-transcripts"
SUBAGENTS_DIR: Final = "subagents"
# Larger transcripts are counted as unreadable rather than read into memory whole.
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
JSONL: Final = ".jsonl"
TXT: Final = ".txt"
_NAME: Final = attrgetter("name")
SETTLED_NS: Final = 2_000_000_000


class TranscriptFile(NamedTuple):
    """One transcript on disk: whose it is and where it was found."""

    conversation_id: str
    path: Path
    slug: str  # the `projects/<slug>` folder: the workspace path with non-alphanumerics as `-`
    parent_id: str | None = None  # a subagent's parent conversation

    @property
    def legacy(self) -> bool:
        return self.path.suffix == TXT


class _Listings:
    """Folder listings and transcript files of one look at a Cursor home, reusing the last
    look's (so a refresh does not list every folder again). A listing is reused while its
    folder's mtime is unchanged, and only once that mtime was SETTLED_NS older than the
    listing: an entry added after the listing then moves the mtime (timestamps are never
    coarser than that)."""

    def __init__(self, before: _Listings | None) -> None:
        self._before = before
        self.folders: dict[str, tuple[int, list[os.DirEntry[str]]]] = {}
        self.files: dict[tuple[str, str, str | None], TranscriptFile] = {}

    def entries(self, folder: str) -> list[os.DirEntry[str]]:
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            return []
        kept = self._before.folders.get(folder) if self._before is not None else None
        if kept is not None and kept[0] == mtime:
            self.folders[folder] = kept
            return kept[1]
        listed_at = time.time_ns()
        try:
            with os.scandir(folder) as it:
                found = sorted(it, key=_NAME)
        except OSError:
            return []
        if mtime < listed_at - SETTLED_NS:
            self.folders[folder] = (mtime, found)
        return found

    def file(self, name: str, path: str, slug: str, parent: str | None = None) -> TranscriptFile:
        key = (path, slug, parent)
        kept = self._before.files.get(key) if self._before is not None else None
        if kept is None or kept.conversation_id != name:
            kept = TranscriptFile(name, Path(path), slug, parent)
        self.files[key] = kept
        return kept


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


# Folders and names as strings until a transcript is found: pathlib objects slow a refresh.
def _candidates(look: _Listings, slug: str, root: str) -> Iterator[TranscriptFile]:
    for entry in look.entries(root):
        name, suffix = os.path.splitext(entry.name)
        if _is_file(entry) and suffix in (JSONL, TXT) and name:
            yield look.file(name, entry.path, slug)
        elif _is_dir(entry):
            inside = {e.name: e for e in look.entries(entry.path)}  # one listing, not 3 probes
            for suffix in (JSONL, TXT):
                own = inside.get(entry.name + suffix)
                if own is not None and _is_file(own):
                    yield look.file(entry.name, own.path, slug)
            sub = inside.get(SUBAGENTS_DIR)
            if sub is None or not _is_dir(sub):
                continue
            for child in look.entries(sub.path):
                child_name, child_suffix = os.path.splitext(child.name)
                if _is_file(child) and child_suffix in (JSONL, TXT) and child_name:
                    yield look.file(child_name, child.path, slug, entry.name)


def _rank(found: TranscriptFile) -> tuple[bool, bool, str]:
    # jsonl over legacy txt; a subagent's copy (it names the parent) over a loose one.
    return found.legacy, found.parent_id is None, str(found.path)


_last_look: dict[str, _Listings] = {}  # Cursor home → its last look


def find_transcripts(home: Path) -> dict[str, TranscriptFile]:
    """One transcript per conversation id (`.jsonl` wins over `.txt`); never under `mcps/`."""
    look = _Listings(_last_look.get(str(home)))
    best: dict[str, TranscriptFile] = {}
    for project in look.entries(os.path.join(home, "projects")):
        if not _is_dir(project):
            continue
        root = os.path.join(project.path, TRANSCRIPTS_DIR)
        for found in _candidates(look, project.name, root):
            kept = best.get(found.conversation_id)
            if kept is None or _rank(found) < _rank(kept):
                best[found.conversation_id] = found
    _last_look[str(home)] = look
    return best


# -- parsing ------------------------------------------------------------------------------------


class _Turns:
    """Accumulates turns; the open one is a StreamRequest (it knows tools and commands)."""

    def __init__(self) -> None:
        self.done: list[GraphTurn] = []
        self.open: StreamRequest | None = None

    def current(self) -> StreamRequest:
        if self.open is None:
            self.open = agent_formats.StreamRequest("")
        return self.open

    def user_text(self, chars: int) -> None:
        open_turn = self.open
        if open_turn is not None and (open_turn.assistant_chars or open_turn.tools):
            self.close()  # a new question without `turn_ended` in between
        self.current().user_chars += chars

    def close(self) -> None:
        turn, self.open = self.open, None
        if turn is not None and (turn.user_chars or turn.context_chars or turn.assistant_chars):
            self.done.append(
                agent_formats.GraphTurn(
                    timestamp_ms=None,
                    user_chars=turn.user_chars,
                    context_chars=turn.context_chars,
                    assistant_chars=turn.assistant_chars,
                    model=None,
                    tools=tuple(turn.tools),
                    commands=tuple(turn.commands),
                )
            )

    def finish(self) -> tuple[GraphTurn, ...]:
        self.close()
        return tuple(self.done)


def _blocks(record: dict[str, Any]) -> list[Any]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else record.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _text_of(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "thinking":
        value = block.get("thinking", block.get("text"))
        return len(value) if isinstance(value, str) else 0
    if kind in ("text", None):
        value = block.get("text")
        return len(value) if isinstance(value, str) else 0
    return 0


def _user(turns: _Turns, blocks: list[Any]) -> None:
    text = results = 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            results += agent_formats.content_chars(block.get("content"))
        else:
            text += _text_of(block)
    if text:
        turns.user_text(text)
    if results:
        turns.current().context_chars += results


def _assistant(turns: _Turns, blocks: list[Any]) -> None:
    turn = turns.current()
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            name = block.get("name")
            args = block.get("input")
            command = args.get("command") if isinstance(args, dict) else None
            if isinstance(name, str):
                turn.add_tool(name, command if isinstance(command, str) else None)
        elif block.get("type") == "tool_result":
            turn.context_chars += agent_formats.content_chars(block.get("content"))
        else:
            turn.assistant_chars += _text_of(block)


def parse_jsonl(data: bytes) -> tuple[GraphTurn, ...]:
    """Turns of a JSONL transcript; lines that are not JSON objects are skipped. Lines end at
    `\n` only: a JSON string may hold U+2028, U+2029 or U+0085 as they are (JavaScript's
    JSON.stringify writes them so), which `str.splitlines` would cut the line at."""
    turns = _Turns()
    json_value = agent_formats.json_value
    for line in data.decode("utf-8", "replace").split("\n"):
        if not line or line.isspace():
            continue
        record = json_value(line)
        if not isinstance(record, dict):
            continue
        if record.get("type") == "turn_ended":
            turns.close()
            continue
        role = record.get("role")
        if role == "user":
            _user(turns, _blocks(record))
        elif role == "assistant":
            _assistant(turns, _blocks(record))
    return turns.finish()


_TXT_MARKERS: Final = (
    ("user:", "user"),
    ("assistant:", "assistant"),  # what the IDE wrote in Jan 2026 (real transcripts)
    ("A:", "assistant"),
    ("[Thinking]", "assistant"),
    ("[Tool call]", "tool"),
    ("[Tool result]", "result"),
)


def _marker(line: str) -> tuple[str | None, str]:
    for marker, kind in _TXT_MARKERS:
        if line.startswith(marker):
            return kind, line[len(marker) :].strip()
    return None, line


def parse_txt(data: bytes) -> tuple[GraphTurn, ...]:
    """Turns of a legacy `.txt` transcript (`user:`, `assistant:` or `A:`, `[Thinking]`,
    `[Tool call]` lines).

    A section's characters are those of its lines, without line ends and markers; a
    `[Tool call] Shell` section's `command:` line names the commands run.
    """
    turns = _Turns()
    section, tool = "user", ""
    for raw in data.decode("utf-8", "replace").splitlines():
        kind, line = _marker(raw)
        if kind == "user":
            turns.close()
        elif kind == "tool":
            tool = line.split()[0] if line else ""
            if tool:
                turns.current().add_tool(tool, None)
            line = ""
        section = kind or section
        if not line:
            continue
        if section == "user":
            turns.user_text(len(line))
        elif section == "assistant":
            turns.current().assistant_chars += len(line)
        elif section == "result":
            turns.current().context_chars += len(line)
        elif tool in ("Shell", "Bash") and line.strip().startswith("command:"):
            turns.current().add_tool(tool, line.strip()[len("command:") :].strip())
    return turns.finish()


class TranscriptTooLarge(Exception):
    """A transcript over MAX_TRANSCRIPT_BYTES: counted as unreadable, never half read."""


def read_transcript(path: Path) -> bytes:
    """The bytes of one transcript file (OSError when it cannot be read, TranscriptTooLarge)."""
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_TRANSCRIPT_BYTES:
            raise TranscriptTooLarge(str(path))
        data = handle.read(MAX_TRANSCRIPT_BYTES + 1)
    if len(data) > MAX_TRANSCRIPT_BYTES:  # it grew while being read
        raise TranscriptTooLarge(str(path))
    return data


def parse_transcript(path: Path, data: bytes | None = None) -> tuple[GraphTurn, ...]:
    """Turns of one transcript file; `data`: its bytes when read already (`read_transcript`).
    The turns depend on those bytes and the file's suffix only (the agent memo relies on it)."""
    if data is None:
        data = read_transcript(path)
    return parse_txt(data) if path.suffix == TXT else parse_jsonl(data)
