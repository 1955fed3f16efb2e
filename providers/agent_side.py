"""The Cursor home's side of a local read: transcripts and CLI sessions through one kept
`AgentReader`, read in process or beside the database in a forked child (`ReadBeside`), their
first-seen times queued for the command's end (`QueuedFirstSeen`), and combined with the IDE
database's result (`AgentSide.combine`)."""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

# The database and graph readers on first use: a status answered from our caches reads neither.
from codeburn.providers.home import AgentRead, AgentReader, AgentSnapshot, take_snapshot
from codeburn.providers.ide import (
    canonical,
    cursor_home,
)
from codeburn.providers.local_store import LocalStore
from codeburn.providers.parts import PartMemo
from codeburn.providers.plan import LONG_LIVED, Plan
from codeburn.providers.runtime import Aside

if TYPE_CHECKING:
    from codeburn.providers.agents import LogChange, Part
    from codeburn.providers.combine import CallMemo, Combined, IdeSide
    from codeburn.providers.ide import ReadResult

FIRST_SEEN_PREFIX: Final = "agent-transcripts:"
BESIDE_NICE: Final = 10  # the priority of the transcripts' process beside the database


class _AgentMemoFile:
    """The store's agent memo as the agent reader's `MemoFile`: written by a process nobody
    waits for where this one may fork (the CLI), else here."""

    def __init__(self, store: LocalStore, plan: Plan) -> None:
        self.store = store
        self.plan = plan

    def load(self) -> bytes | None:
        return self.store.load_agent_memo()

    def save(self, data: bytes) -> None:
        store = self.store
        if not self.plan.detach(lambda: store.save_agent_memo(data)):
            store.save_agent_memo(data)


def ide_side(result: ReadResult | None) -> IdeSide:
    # (the combining on first use: a status answered from our caches combines nothing)
    from codeburn.providers.combine import NO_IDE, IdeSide  # noqa: PLC0415

    if result is None:
        return NO_IDE
    return IdeSide(
        result.calls, result.conversations, result.metas, result.unreadable_ids, result.parts
    )


def earliest(seen: dict[str, int], held: Mapping[str, int]) -> dict[str, int]:
    """`seen` with the times of `held` it lacks or has later (a rebuilt file keeps old days)."""
    merged = dict(seen)
    for key, ms in held.items():
        old = merged.get(key)
        if old is None or ms < old:
            merged[key] = ms
    return merged


class QueuedFirstSeen:
    """The store's first-seen times, with the saves a CLI command queued for its end
    (`later`: the lock, the read and the fsync would delay the output): until they are
    saved, `load` adds them to the file's."""

    def __init__(self, store: LocalStore, plan: Plan = LONG_LIVED) -> None:
        self.store = store
        self.plan = plan
        self._queued: dict[str, dict[str, int]] = {}

    def load(self, namespace: str) -> dict[str, int]:
        stored = self.store.load_first_seen(namespace)
        queued = self._queued.get(namespace)
        return earliest(stored, queued) if queued else stored

    def save(self, namespace: str, seen: dict[str, int]) -> None:
        store = self.store
        if self.plan.after_answer(lambda: store.save_first_seen(namespace, seen)):
            queued = self._queued.get(namespace)
            self._queued[namespace] = earliest(queued, seen) if queued else dict(seen)
        else:
            store.save_first_seen(namespace, seen)


class AgentSide:
    """Transcripts and CLI sessions under one Cursor home: one AgentReader kept alive
    (incremental refresh), its per-file state and the first-seen dates of undated transcript
    turns kept in the store, and the combination with the IDE reader's result."""

    def __init__(
        self,
        store: LocalStore,
        home: Path | None = None,
        *,
        plan: Plan = LONG_LIVED,
        seen: QueuedFirstSeen | None = None,
    ) -> None:
        self.store = store
        self.seen = seen if seen is not None else QueuedFirstSeen(store, plan)
        self.plan = plan
        self.home = canonical(home if home is not None else cursor_home())
        self.home_key = str(self.home)
        self._reader: AgentReader | None = None
        self._calls: CallMemo | None = None  # made by the first `combine`
        self._forked = False
        self._beside: tuple[AgentSnapshot, AgentRead] | None = None  # the child's read

    def snapshot(self) -> AgentSnapshot:
        return take_snapshot(self.home)

    def read(self, snapshot: AgentSnapshot) -> AgentRead:
        reader = self._reader
        if reader is None:
            entries = self.store.load_agent_files(self.home_key)
            reader = AgentReader(self.home, entries, _AgentMemoFile(self.store, self.plan))
            if self._beside is not None:  # what the child decoded of the entries it saved
                reader.adopt(*self._beside)
                self._beside = None
            self._reader = reader
        result = reader.read(snapshot)
        if reader.changed and not result.busy:
            store, home, entries = self.store, self.home_key, dict(reader.entries)

            def save() -> None:
                store.save_agent_files(home, entries)

            self.plan.save(f"agent files {home}", save)
            reader.changed = False
        if not self.plan.long_lived:
            self._reader = None
        return result

    def read_beside(self, snapshot: AgentSnapshot) -> ReadBeside | None:
        """`read(snapshot)` started in a forked child, on a first read where the process may
        fork (the CLI), to run while the caller reads the IDE database; None otherwise (the
        language server reads in process). The child's reader state is not kept: a later
        read starts from the per-file state the child saved, in process (a long-lived service
        that forked at each refresh would fork and unpickle everything again)."""
        if self._reader is not None or self._forked or not self.plan.may_fork():
            return None
        self._forked = True
        return ReadBeside(self, snapshot)

    @property
    def first_seen_key(self) -> str:
        return FIRST_SEEN_PREFIX + self.home_key

    def combine(
        self,
        ide: ReadResult | None,
        agent: AgentRead,
        held: dict[str, int] | None = None,
        parts: PartMemo | None = None,
    ) -> Combined:
        """`held`: first-seen times sealed days hold (the daily cache's copy), for a lost file;
        `parts`: the caller's memo of its parts' facts."""
        key = self.first_seen_key
        stored = self.seen.load(key) if agent.transcripts else {}
        seen = earliest(stored, held) if held and agent.transcripts else stored
        from codeburn.providers.combine import CallMemo, combine  # noqa: PLC0415

        if self._calls is None:
            self._calls = CallMemo()
        combined = combine(ide_side(ide), agent, seen, self._calls, parts)
        if not self.plan.long_lived:
            self._calls = None
        if combined.first_seen != stored:
            self.seen.save(key, combined.first_seen)
        return combined


class ReadBeside:
    """`AgentSide.read` in a forked child; its answer also spares the next read in process
    decoding again every file the child decoded."""

    def __init__(self, side: AgentSide, snapshot: AgentSnapshot) -> None:
        # Lower priority: its answer is wanted only once the database is read, and the
        # database's two processes are the ones the read waits for. Nice 10 (a small share of
        # a core where they compete) lets it finish about when the caller wants it on two
        # cores; nice 19 starves it until both have ended, and the caller then waits
        # (bench/README.md).
        self._aside = Aside(lambda: _read_saving_later(side, snapshot), nice=BESIDE_NICE)
        self._side, self._snapshot = side, snapshot

    def result(self) -> AgentRead:
        read, saves = self._aside.result()
        store = self._side.store
        for name, args in saves:
            work = partial(_save, store, name, args)
            if not self._side.plan.after_answer(work):
                work()
        if self._side.plan.long_lived:
            self._side._beside = (self._snapshot, read)
        return read

    def cancel(self) -> None:
        self._aside.cancel()


_Saves = list[tuple[str, bytes]]  # (LocalStore method, its pickled arguments), in call order


class _SavesForParent:
    """The `LocalStore` of a forked reader: loads read the store, saves are kept for the
    parent, which does them once its answer is out (`later`). In the child they would delay
    the transcripts' process (importing filelock, encoding and writing the files) while
    the caller waits for it; pickled here, they are one bytes object each to send."""

    def __init__(self, store: LocalStore) -> None:
        self._store = store
        self.saves: _Saves = []

    def _keep(self, name: str, *args: object) -> None:
        self.saves.append((name, pickle.dumps(args, pickle.HIGHEST_PROTOCOL)))

    def load_agent_files(self, home: str) -> dict[str, Any]:
        return self._store.load_agent_files(home)

    def save_agent_files(self, home: str, entries: dict[str, Any]) -> None:
        self._keep("save_agent_files", home, entries)

    def load_first_seen(self, key: str) -> dict[str, int]:
        return self._store.load_first_seen(key)

    def save_first_seen(self, key: str, seen: dict[str, int]) -> None:
        self._keep("save_first_seen", key, seen)

    def load_blob_memo(self) -> bytes | None:
        return self._store.load_blob_memo()

    def save_blob_memo(self, data: bytes) -> None:
        self._keep("save_blob_memo", data)

    def load_agent_memo(self) -> bytes | None:
        return self._store.load_agent_memo()

    def save_agent_memo(self, data: bytes) -> None:
        self._keep("save_agent_memo", data)

    def load_tool_logs(self, identity: str) -> dict[str, str]:
        return self._store.load_tool_logs(identity)

    def tool_log_parts(self, keys: Sequence[str], low: int | None) -> dict[str, list[Part]]:
        return self._store.tool_log_parts(keys, low)

    def save_tool_logs(self, identity: str, changes: Iterable[LogChange]) -> None:
        self._keep("save_tool_logs", identity, changes)


def _read_saving_later(side: AgentSide, snapshot: AgentSnapshot) -> tuple[AgentRead, _Saves]:
    """(In the forked child: its copy of `side` is its own.) The read, and the saves it made."""
    store = _SavesForParent(side.store)
    side.store = store
    return side.read(snapshot), store.saves


def _save(store: LocalStore, name: str, args: bytes) -> None:
    getattr(store, name)(*pickle.loads(args))
