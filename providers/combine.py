"""One representation per conversation across the IDE database, CLI stores and transcripts.

Order (issue 8 §2): IDE bubbles → IDE root graph → CLI `store.db` graph → agent transcript →
the IDE's context meter alone. Never two representations of one id added together.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import unquote

# The agent formats on first use: a status reads no graph.
import codeburn.providers.agent as agent_formats
from codeburn.providers.calls import CURSOR, CURSOR_AGENT, UNMAPPED_PROJECT, Call
from codeburn.providers.ide import path_project, project_name
from codeburn.providers.parts import PartFacts, PartMemo

if TYPE_CHECKING:
    from codeburn.providers.agent import Graph, GraphTurn
    from codeburn.providers.home import AgentRead, CliSession, TranscriptRead

    # (a conversation's turns, their first-seen times, the turns so dated)
    _Dated = tuple[tuple[GraphTurn, ...], tuple[int, ...], tuple[GraphTurn, ...]]

# IDE representations that win over everything outside the database.
IDE_FULL: Final = frozenset({"bubbles", "root"})
CLI_KEY_PREFIX: Final = "cursor-agent:"
BUBBLE_KEY_PREFIX: Final = "cursor:bubble:"
_NOT_ALNUM: Final = re.compile(r"[^A-Za-z0-9]+")


class MetaLike(Protocol):
    """What the IDE knows about a conversation (layout3's ConversationMeta)."""

    @property
    def project(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def created_ms(self) -> int | None: ...
    @property
    def updated_ms(self) -> int | None: ...
    @property
    def parent_id(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class IdeSide:
    """The IDE reader's answer, as far as the combination needs it."""

    calls: list[Call]
    conversations: Mapping[str, str]  # id → "bubbles" | "root" | "meter" | "unreadable"
    metas: Mapping[str, MetaLike]
    unreadable_ids: Mapping[str, str]  # conversation id → why it could not be read
    # `calls` in parts (`providers.parts`); empty: `calls` is the one part
    parts: list[list[Call]] = field(default_factory=list)

    def call_parts(self) -> list[list[Call]]:
        return self.parts if self.parts or not self.calls else [self.calls]


NO_IDE: Final = IdeSide([], {}, {}, {})


@dataclass(slots=True)
class Combined:
    parts: list[list[Call]]  # every call, in parts (`providers.parts`), in order
    unreadable: dict[str, int]  # reason → conversations that exist but could not be read
    first_seen: dict[str, int]  # transcript turn (`<id>:<n>`) → when it was first seen
    # transcripts read whose turns carry no time, by how they were dated: "conversation" (its
    # start and last update) or "first-seen" (when the file was first seen), for `diagnostics`
    inferred: dict[str, int] = field(default_factory=dict)

    @property
    def calls(self) -> list[Call]:
        return list(itertools.chain.from_iterable(self.parts))


def slug_key(text: str) -> str:
    """How Cursor names a transcript folder after a path (`/home/me/app` → `home-me-app`)."""
    return _NOT_ALNUM.sub("-", text).strip("-")


def _path_project(path: str) -> str:
    return project_name(path) if "://" in path else path_project(path)


def _as_path(candidate: str) -> str:
    if candidate.startswith("file://"):
        return unquote(candidate.removeprefix("file://"))
    return candidate


def _session_project(session: CliSession) -> str | None:
    """A CLI session's project: the known workspace path whose md5 names its `chats/` folder,
    else the root's or meta's workspace, else the path its system prompt names."""
    uris = session.graph.workspace_uris if session.graph is not None else ()
    known = [c for c in (*uris, session.workspace, session.prompt_workspace) if c]
    folder = session.folder
    if folder:
        for candidate in known:
            path = _as_path(candidate).encode("utf-8", "replace")
            if hashlib.md5(path, usedforsecurity=False).hexdigest() == folder:
                return _path_project(candidate) or None
    for candidate in known:
        project = _path_project(candidate)
        if project:
            return project
    return None


class CallMemo:
    """`graph_calls` of each conversation, reused while everything they are made of is equal
    (so a refresh does not rebuild the calls of every unchanged transcript)."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[tuple[Any, ...], list[Call]]] = {}
        self._now: dict[str, tuple[tuple[Any, ...], list[Call]]] = {}
        self._dated_last: dict[str, _Dated] = {}  # by conversation id
        self._dated_now: dict[str, _Dated] = {}

    def dated(
        self, cid: str, turns: tuple[GraphTurn, ...], times: tuple[int, ...]
    ) -> tuple[GraphTurn, ...]:
        """`turns`, each at its time in `times`: the same tuple while both are the same (a
        refresh dated every turn of every transcript without header times again, and the
        calls memo then compared them all)."""
        kept = self._dated_last.get(cid)
        if kept is None or kept[0] is not turns or kept[1] != times:
            dated = tuple(t._replace(timestamp_ms=ms) for t, ms in zip(turns, times, strict=True))
            kept = (turns, times, dated)
        self._dated_now[cid] = kept
        return kept[2]

    def calls(self, graph: Graph, **how: Any) -> list[Call]:
        name = f"{how['key_prefix']}{how['conversation_id']}"
        made_of = (graph, *how.items())
        kept = self._now.get(name) or self._last.get(name)
        calls = (
            kept[1]
            if kept is not None and kept[0] == made_of
            else agent_formats.graph_calls(graph, **how)
        )
        self._now[name] = (made_of, calls)
        return calls

    def done(self) -> None:
        """Keep only what this combination used."""
        self._last, self._now = self._now, {}
        self._dated_last, self._dated_now = self._dated_now, {}


class _Combiner:
    def __init__(
        self,
        ide: IdeSide,
        agent: AgentRead,
        first_seen: dict[str, int],
        memo: CallMemo,
        parts: PartMemo,
    ) -> None:
        self.ide, self.agent, self.memo, self.parts = ide, agent, memo, parts
        self.ide_parts = parts.all(ide.call_parts())
        self.first_seen = dict(first_seen)
        self.taken = {c for c, rep in ide.conversations.items() if rep in IDE_FULL}
        # A conversation with bubble calls is read from its bubbles, whatever else it has.
        known: set[str] = set()
        for facts in self.ide_parts:
            self.taken.update(facts.sessions_keyed(BUBBLE_KEY_PREFIX))
            known.update(facts.projects)
        self.represented: set[str] = set()
        self.inferred: Counter[str] = Counter()
        known.update(m.project for m in ide.metas.values() if m.project)
        known.update(p for s in agent.sessions.values() if (p := _session_project(s)))
        self.by_slug = {slug_key(p): p for p in sorted(known) if slug_key(p)}

    def is_ide(self, conversation_id: str | None) -> bool:
        ide = self.ide
        return conversation_id is not None and (
            conversation_id in ide.conversations or conversation_id in ide.metas
        )

    def slug_project(self, slug: str) -> str:
        key = slug_key(slug)
        if not key:
            return UNMAPPED_PROJECT
        return self.by_slug.get(key, f"-{key}")

    def session_calls(self, session: CliSession) -> list[Call]:
        assert session.graph is not None
        cid = session.conversation_id
        meta = self.ide.metas.get(cid)
        transcript = self.agent.transcripts.get(cid)
        project = (
            _session_project(session)
            or (meta.project if meta is not None else None)
            or (self.slug_project(transcript.file.slug) if transcript else UNMAPPED_PROJECT)
        )
        return self.memo.calls(
            session.graph,
            conversation_id=cid,
            provider=CURSOR_AGENT,
            project=project,
            fallback_model=session.model or (meta.model if meta is not None else None),
            created_ms=session.created_ms or (meta.created_ms if meta is not None else None),
            updated_ms=meta.updated_ms if meta is not None else None,
            key_prefix=CLI_KEY_PREFIX,
        )

    def transcript_calls(self, read: TranscriptRead) -> list[Call]:
        cid = read.file.conversation_id
        metas = self.ide.metas
        meta = metas.get(cid)
        # The subagents/ folder names the parent; else the IDE's subagent header does.
        parent = read.file.parent_id or (meta.parent_id if meta is not None else None)
        parent_meta = metas.get(parent) if parent is not None else None
        parent_session = self.agent.sessions.get(parent) if parent is not None else None
        ide = self.is_ide(cid) or self.is_ide(parent)
        project = (
            (meta.project if meta is not None else None)
            or (parent_meta.project if parent_meta is not None else None)
            or (_session_project(parent_session) if parent_session is not None else None)
            or self.slug_project(read.file.slug)
        )
        model = next(
            (m.model for m in (meta, parent_meta) if m is not None and m.model),
            parent_session.model if parent_session is not None else None,
        )
        created = meta.created_ms if meta is not None else None
        updated = meta.updated_ms if meta is not None else None
        turns = read.turns
        if created is None and updated is None:
            # No header time anywhere: each turn keeps the file's mtime when it was first seen.
            seen, mtime = self.first_seen, read.mtime_ms
            times = tuple(seen.setdefault(f"{cid}:{i}", mtime) for i in range(len(turns)))
            turns = self.memo.dated(cid, turns, times)
            self.inferred["first-seen"] += 1
        else:  # a transcript's lines carry no time: spread over its conversation's times
            self.inferred["conversation"] += 1
        provider = CURSOR if ide else CURSOR_AGENT
        return self.memo.calls(
            agent_formats.Graph(
                turns=turns, used_tokens=0, started_ms=None, workspace_uris=(), skipped_blobs=0
            ),
            conversation_id=cid,
            provider=provider,
            project=project,
            fallback_model=model,
            created_ms=created,
            updated_ms=updated,
            key_prefix=f"{provider}:transcript:",
        )

    def run(self) -> Combined:
        parts: list[list[Call]] = []
        pending: dict[str, str] = {}
        for cid, session in sorted(self.agent.sessions.items()):
            if cid in self.taken:
                continue
            if session.graph is not None and session.graph.turns:
                parts.append(self.session_calls(session))
                self.represented.add(cid)
            elif session.unreadable is not None:
                pending[cid] = session.unreadable
        for cid, read in sorted(self.agent.transcripts.items()):
            if cid in self.taken or cid in self.represented:
                continue
            if read.turns:
                parts.append(self.transcript_calls(read))
                self.represented.add(cid)
            elif read.unreadable is not None:
                pending.setdefault(cid, read.unreadable)
        reps = self.ide.conversations
        # Counted here only when the IDE has nothing of it (its meter, or its own count).
        unreadable = Counter(
            r for c, r in pending.items() if c not in self.represented and c not in reps
        )
        unreadable.update(self._ide_unreadable())
        replaced = {c for c in self.represented if reps.get(c) not in IDE_FULL} - self.taken
        ide_parts = [_without(f, replaced) for f in self.ide_parts]
        parts = [p for p in (*ide_parts, *parts) if p]
        return Combined(
            parts, dict(sorted(unreadable.items())), self.first_seen, dict(self.inferred)
        )

    def _ide_unreadable(self) -> Counter[str]:
        """The IDE's unreadable conversations by reason, less those read from an agent source."""
        return Counter(
            reason for cid, reason in self.ide.unreadable_ids.items() if cid not in self.represented
        )


def _without(facts: PartFacts, sessions: set[str]) -> list[Call]:
    """The part less the calls of these sessions (itself when it has none of them)."""
    if not sessions or not facts.sessions & sessions:
        return facts.part
    return [c for c in facts.part if c.session not in sessions]


def combine(
    ide: IdeSide,
    agent: AgentRead,
    first_seen: dict[str, int],
    memo: CallMemo | None = None,
    parts: PartMemo | None = None,
) -> Combined:
    """All local calls, each conversation once, and what could not be read. `memo` and
    `parts`, kept by the caller between combinations, spare rebuilding the calls of unchanged
    conversations and going through them again."""
    if not agent.transcripts and not agent.sessions:  # the common case: nothing to combine
        unreadable = dict(sorted(Counter(ide.unreadable_ids.values()).items()))
        return Combined(ide.call_parts(), unreadable, dict(first_seen))
    memo = memo if memo is not None else CallMemo()
    parts = parts if parts is not None else PartMemo()
    combined = _Combiner(ide, agent, first_seen, memo, parts).run()
    memo.done()
    return combined
