"""Every local source in one read: Cursor's IDE database, agent transcripts, CLI stores, and
other AI coding tools' logs (Claude Code, Codex: docs/other-tools.md).

`LocalReader.read` reads the IDE database (incrementally, one reader kept per floor) and the
Cursor home beside it, combines them (one representation per conversation, `combine`) and says
what could not be read. What it keeps between runs — parsed agent files and first-seen times
— goes through a `LocalStore`, which the cache layer implements, the way httpx takes a
`transport=`: this module never touches a file of ours.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

# The database and graph readers on first use: a status answered from our caches reads neither,
# and the other tools' decoders once their logs exist.
import codeburn.providers.agent as agent_formats
import codeburn.providers.agents as tool_logs
import codeburn.providers.ide as ide_db
from codeburn.providers.agent_side import (
    AgentSide,
    QueuedFirstSeen,
    earliest,
)
from codeburn.providers.agents import ToolRead, ToolSnapshot, take_snapshot
from codeburn.providers.calls import Call, CallChain, SessionRun, runs_of
from codeburn.providers.conversations import ConversationMemo, LocalConversation
from codeburn.providers.gauges import MAX_GAUGE_TOKENS, skipped_gauge_note
from codeburn.providers.home import AgentRead, AgentSnapshot
from codeburn.providers.ide import (
    NO_DATE,
    named_paths,
    storage_fingerprint,
    workspace_storage_dir,
)
from codeburn.providers.local_store import LocalStore
from codeburn.providers.parts import PartFacts, PartMemo, since
from codeburn.providers.plan import LONG_LIVED, Plan
from codeburn.providers.sqlite_ro import DatabaseMissingError

if TYPE_CHECKING:
    from codeburn.providers.agents import ToolLogs
    from codeburn.providers.ide import CursorReader, ReadResult

AGENT_ONLY: Final = "showing agent transcripts and Cursor Agent CLI sessions only"
OTHER_TOOLS_ONLY: Final = "showing Claude Code and Codex logs only"
Progress = Callable[[int, int], None]


class _MemoFile:
    """The store's blob memo as the IDE reader's `MemoFile` (a file: it may be written by a
    forked process)."""

    background = True

    def __init__(self, store: LocalStore) -> None:
        self.store = store

    def load(self) -> bytes | None:
        return self.store.load_blob_memo()

    def save(self, data: bytes) -> None:
        self.store.save_blob_memo(data)


@dataclass(slots=True)
class LocalRead:
    """One read of every local source. `no_data` is set (the reason's detail, maybe "") when
    there was nothing to read at all."""

    calls: Sequence[Call] = field(default_factory=list)  # the other tools' last: `CallChain`
    notes: list[str] = field(default_factory=list)
    unreadable: dict[str, int] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)  # facts, not warnings (docs/cli.md)
    busy: bool = False  # a locked CLI store: nothing may be cached or sealed
    no_data: str | None = None
    # every local conversation by id: project, title, provider, models, recorded turns
    conversations: dict[str, LocalConversation] = field(default_factory=dict)
    # project slug → the folder it names, for the calls' slugs made from one (the slug alone
    # cannot tell `/` from `-`); a slug not in it has no known folder
    paths: dict[str, str] = field(default_factory=dict)


def unreadable_warning(unreadable: dict[str, int]) -> str | None:
    """The report/status notice for conversations that exist but could not be read."""
    total = sum(unreadable.values())
    if not total:
        return None
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(unreadable.items()))
    noun = "conversation" if total == 1 else "conversations"
    # Only "no date" (inline composers of 0.44–0.45 with no time at all) is an older format.
    where = " in a newer Cursor format" if set(unreadable) - {NO_DATE} else ""
    return f"{total} {noun}{where} could not be read ({reasons}) — sync or import for exact figures"


def skipped_cli_gauges(agent: AgentRead) -> int:
    """Cursor Agent CLI sessions whose meter is above the gauge bound (skipped, see gauges)."""
    return sum(
        1
        for s in agent.sessions.values()
        if s.graph is not None and s.graph.used_tokens > MAX_GAUGE_TOKENS
    )


def local_notices(result: ReadResult | None, unreadable: dict[str, int]) -> list[str]:
    """Warnings of a local read (problems a person may act on), for the report/status
    `warnings`: unreadable conversations, the scan budget."""
    notes: list[str] = []
    unread = unreadable_warning(unreadable)
    if unread is not None:
        notes.append(unread)
    if result is not None:
        notes.extend(result.warnings)
    return notes


def local_diagnostics(
    result: ReadResult | None,
    skipped_gauges: int = 0,
    transcripts: Mapping[str, int] | None = None,
) -> list[str]:
    """Facts of a local read that are not problems (skipped rows and meters, inferred dates),
    for the report/status `diagnostics` (docs/cli.md: `--verbose` and the log). `transcripts`:
    transcripts dated by inference, by how (`Combined.inferred`)."""
    notes = transcript_diagnostics(transcripts or {})
    skipped_gauges += result.skipped_gauges if result is not None else 0
    if skipped_gauges:
        notes.append(skipped_gauge_note(skipped_gauges))
    if result is None:
        return notes
    if n := result.skipped_subcomposer:
        rows = _plural(n, "row")
        notes.append(f"skipped {n} Cursor tool-call {rows} that are not sessions")
    if n := result.skipped_undated:
        notes.append(f"skipped {n} Cursor {_plural(n, 'message')} without a usable date")
    if n := result.inferred_dates:
        notes.append(
            f"dated {n} Cursor {_plural(n, 'message')} of older builds from their"
            " conversation's start and last update (they carry no time of their own)"
        )
    return notes


def transcript_diagnostics(inferred: Mapping[str, int]) -> list[str]:
    """Agent transcripts carry no time of their own: how the read dated them."""
    notes = []
    by_conversation = inferred.get("conversation", 0)
    if by_conversation:
        notes.append(
            f"dated {by_conversation} agent {_plural(by_conversation, 'transcript')} from their "
            "conversation's start and last update (transcripts carry no time of their own)"
        )
    by_file = inferred.get("first-seen", 0)
    if by_file:
        notes.append(
            f"dated {by_file} agent {_plural(by_file, 'transcript')} from when CodeBurn first saw "
            "the file (no conversation time is known for them; approximate)"
        )
    return notes


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"


def conversations_of(
    parts: list[PartFacts],
    ide: ReadResult | None,
    agent: AgentRead,
    memo: ConversationMemo | None = None,
) -> dict[str, LocalConversation]:
    """The local conversations of these calls, with the turns and titles their readers know.
    `memo`, kept between reads, keeps the conversations that did not change."""
    turns = dict(ide.turns) if ide is not None else {}
    titles = dict(ide.titles) if ide is not None else {}
    for cid, session in agent.sessions.items():
        if cid not in turns:
            found = agent_formats.graph_turns(session.graph)
            if found:
                turns[cid] = found
        if session.title and cid not in titles:
            titles[cid] = session.title
    return (memo if memo is not None else ConversationMemo()).build(parts, turns, titles)


def tool_conversations(
    runs: Mapping[str, SessionRun], read: ToolRead
) -> dict[str, LocalConversation]:
    """Other tools' sessions (`runs` of their calls) as conversations (title, project, models,
    span; no turns: exact Cursor events are never theirs)."""
    return {
        sid: LocalConversation(
            sid,
            run.project,
            run.provider,
            read.titles.get(sid),
            run.models,
            (),
            run.first_ms,
            run.last_ms,
        )
        for sid, run in runs.items()
    }


def _with_tools(
    cursor_calls: list[Call], conversations: dict[str, LocalConversation], tools: ToolRead
) -> tuple[Sequence[Call], dict[str, LocalConversation], dict[str, str]]:
    """A read's calls, conversations and named folders: Cursor's, then the other tools'
    (whose calls are made as derivation goes through them: `CallRun`)."""
    if not tools.calls:
        return cursor_calls, conversations, named_paths(c.project for c in cursor_calls)
    runs = runs_of(tools.calls)
    slugs = [*(c.project for c in cursor_calls), *(r.project for r in runs.values())]
    return (
        CallChain(cursor_calls, tools.calls),
        {**conversations, **tool_conversations(runs, tools)},
        named_paths(slugs),
    )


class LocalReader:
    """Every local source of one Cursor database and one Cursor home (`CODEBURN_CURSOR_HOME`).

    Kept alive by a long-lived service so that refreshes are incremental. Raises the
    `CursorDbError`s of the IDE database other than a missing file (locked, unrecognized, …).
    `plan` (`providers.plan`): under a one-shot plan (a command) nothing a refresh would reuse
    is kept past a read — the database reader's state, the agent side's memos — so that what
    follows the read (caches written, days derived, the report) reuses that memory instead of
    adding to it; a later read parses from scratch.
    """

    def __init__(
        self,
        db_path: Path,
        store: LocalStore,
        home: Path | None = None,
        *,
        plan: Plan = LONG_LIVED,
    ) -> None:
        self.db_path = db_path
        self.db_key = str(db_path)
        self.store = store
        self.plan = plan
        self.seen = QueuedFirstSeen(store, plan)
        self.agent = AgentSide(store, home, plan=plan, seen=self.seen)
        self._reader: CursorReader | None = None
        self._seen_saved: dict[str, int] | None = None
        self._parts = PartMemo()
        self._conversations = ConversationMemo()
        self._tools: ToolLogs | None = None  # (see `tools`)
        # The other tools' files as this refresh found them: one listing serves the read of
        # the days before the month, the fingerprint and the read (see `refreshed`).
        self._tool_snap: ToolSnapshot | None = None

    def snapshot(self) -> AgentSnapshot:
        """The Cursor home's files and their identities (cheap: no file is read)."""
        return self.agent.snapshot()

    @property
    def tools(self) -> ToolLogs:
        """The reader of the other tools' logs, made when first needed."""
        if self._tools is None:
            self._tools = tool_logs.ToolLogs(self.store, self.plan)
        return self._tools

    def _tool_snapshot(self) -> ToolSnapshot:
        snap = self._tool_snap
        if snap is None:
            # A command's listing is the reader's own (it keeps none between commands).
            if self._tools is None and not self.plan.long_lived:
                snap = take_snapshot()
            else:
                snap = self.tools.listing.snapshot()
            self._tool_snap = snap
        return snap

    def sources_fingerprint(self, snapshot: AgentSnapshot) -> str:
        """Changes whenever a figure of a source beside the database file could (the other
        tools' logs included)."""
        workspaces = storage_fingerprint(workspace_storage_dir(self.db_path))
        return f"{workspaces}|{snapshot.fingerprint}|{self._tool_snapshot().fingerprint}"

    def has_sources(self, snapshot: AgentSnapshot) -> bool:
        """Whether anything local exists to read: the database, the Cursor home's files, or
        another tool's logs."""
        return self.db_path.is_file() or bool(snapshot.idents) or bool(self._tool_snapshot().files)

    def refreshed(self) -> None:
        """A refresh is over: the next one looks at the other tools' files again."""
        self._tool_snap = None

    def watch_tool_logs(self, on: bool) -> None:
        """Whether an editor's file watch reports every change to the other tools' logs
        (`LogListing.watch`); `tool_logs_changed` takes its reports."""
        self.tools.listing.watch(on)

    def tool_logs_changed(self, paths: Iterable[str] | None) -> None:
        self.tools.listing.files_changed(paths)

    def tool_calls(self, first_ms: int, end_ms: int) -> list[Call]:
        """Other tools' calls in [first_ms, end_ms): their logs are read whole, with no
        6-month floor (docs/other-tools.md); the read's state is kept for the next read."""
        snap = self._tool_snapshot()
        if self._nothing_to_read(snap):
            return []
        return self.tools.calls_between(snap, first_ms, end_ms)

    def _nothing_to_read(self, snap: ToolSnapshot) -> bool:
        """No log, and none read before: a read would find no call (what the store keeps of
        logs now gone is dropped by the next read that finds a log)."""
        return not snap.files and self._tools is None

    def prepare_tools(self, since_ms: int) -> None:
        """Read the other tools' logs from `since_ms` now, the answer unused: a long-lived
        reader whose next reads start there (the days before were just sealed) then answers
        its first refresh after an append by weighing the new requests alone
        (`ClaudeCallsMemo`), instead of every request since `since_ms`."""
        if self.plan.long_lived and self._tool_snapshot().files:
            self._read_tools(since_ms)

    def _read_tools(self, since_ms: int, progress: Progress | None = None) -> ToolRead:
        """Claude Code's and Codex's logs: only what is new since the last read; the state is
        saved once the command's answer is out (or behind the language server's status)."""
        snap, self._tool_snap = self._tool_snapshot(), None
        if self._nothing_to_read(snap):
            return ToolRead(diagnostics=list(snap.problems))
        tools = self.tools
        read = tools.read(snap, since_ms, progress)
        if tools.changed:
            # Many records to encode (a first read): beside the rest of the command, by a
            # writer it waits for at its end (counted only where the plan may fork: a server's
            # refresh does not walk every log for it).
            many = self.plan.may_fork() and tools.unsaved_records() >= self.plan.split_rows
            save = tools.save_later(lazy=not self.plan.long_lived)
            if not (many and self.plan.detach(save)):
                self.plan.save("tool logs", save)
        if not self.plan.long_lived:
            self._tools = None
        return read

    def read(
        self,
        floor_ms: int,
        snapshot: AgentSnapshot,
        progress: Progress | None = None,
        *,
        held: Mapping[str, dict[str, int]] | None = None,
    ) -> LocalRead:
        """Calls at or after `floor_ms` of every local source, with their notices. `held`: the
        first-seen times sealed days hold, per namespace (the daily cache's copy), so that a
        lost first-seen file never dates a request a sealed day holds again."""
        held = held or {}
        db_exists = self.db_path.is_file()
        if not self.has_sources(snapshot):
            self._tool_snap = None
            return LocalRead(no_data="")
        result: ReadResult | None = None
        missing = ""
        # The reader before the fork: the child then has the modules it imports (the agent
        # formats), instead of importing them again beside the parse.
        reader = self._reader_for(floor_ms, held.get(self.db_key)) if db_exists else None
        beside = self.agent.read_beside(snapshot) if db_exists else None
        try:
            if reader is not None:
                try:
                    result = reader.read(progress, flat=False)
                except DatabaseMissingError as exc:
                    missing = f": {exc}"
                finally:
                    if not self.plan.long_lived:  # freed before anything else is built
                        self._reader = None
                if result is not None:
                    self._save_first_seen(result.first_seen)
            agent = beside.result() if beside is not None else self.agent.read(snapshot)
        finally:
            if beside is not None:
                beside.cancel()
        tools = self._read_tools(floor_ms, progress)
        if result is None and not agent.has_data and not tools.calls:
            return LocalRead(no_data=missing)
        combined = self.agent.combine(
            result, agent, held.get(self.agent.first_seen_key), self._parts
        )
        notes = local_notices(result, combined.unreadable)
        diagnostics = (
            local_diagnostics(result, skipped_cli_gauges(agent), combined.inferred)
            + tools.diagnostics
        )
        if result is None:
            only = AGENT_ONLY if agent.has_data else OTHER_TOOLS_ONLY
            notes.insert(0, f"No Cursor database found at {self.db_path}; {only}")
        parts = self._parts.all(combined.parts)
        self._parts.done()
        calls, conversations, paths = _with_tools(
            since(parts, floor_ms),
            conversations_of(parts, result, agent, self._conversations),
            tools,
        )
        return LocalRead(
            calls,
            notes,
            combined.unreadable,
            diagnostics,
            busy=agent.busy,
            conversations=conversations,
            paths=paths,
        )

    def _save_first_seen(self, seen: dict[str, int]) -> None:
        # Unchanged since this reader saved it: the file holds these times or earlier ones.
        if seen != self._seen_saved:
            self.seen.save(self.db_key, seen)
            self._seen_saved = seen

    def first_seen_of(self, namespace: str) -> dict[str, int]:
        """The first-seen times kept for `namespace` (see `QueuedFirstSeen.load`)."""
        return self.seen.load(namespace)

    def _reader_for(self, floor_ms: int, held: dict[str, int] | None = None) -> CursorReader:
        reader = self._reader
        if reader is None or reader.floor_ms > floor_ms:
            first_seen = self.seen.load(self.db_key)
            if held:  # the file was lost: a request a sealed day holds keeps its day
                first_seen = earliest(first_seen, held)
            reader = ide_db.CursorReader(
                self.db_path, floor_ms=floor_ms, first_seen=first_seen,
                memo_file=_MemoFile(self.store), plan=self.plan,
            )  # fmt: skip
            self._reader = reader
        return reader
