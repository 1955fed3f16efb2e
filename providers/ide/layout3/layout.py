"""What the Cursor 3.x pass found and keeps for the next one (`Layout3`), and the cheap
checks for that layout."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from codeburn.providers.agent import Graph, GraphUnreadable
from codeburn.providers.calls import Call
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3.blob_scan import JsonRecords
from codeburn.providers.ide.layout3.headers import (
    Composer,
    ComposerRows,
)
from codeburn.providers.ide.layout3.memo import BlobMemo
from codeburn.providers.ide.layout3.metas import ConversationMeta, MetasMade

BUBBLES: Final = "bubbles"
ROOT: Final = "root"
METER: Final = "meter"
UNREADABLE: Final = "unreadable"
# The newest composerData `_v` whose layout is known (Cursor 3.22).
KNOWN_VERSION: Final = 18
FIRST_GRAPH_VERSION: Final = 17
ROOT_KEY_PREFIX: Final = "cursor:root:"


class Outcome(NamedTuple):
    """What a pass made of one conversation without bubbles, and from what: the next pass
    replays it while the composer (the same object: its sources did not change) and its meta
    are the same, and no blob it missed can arrive (so a refresh need not look at each)."""

    comp: Composer
    meta: ConversationMeta
    kind: str | None  # its entry in `conversations`
    part: list[Call] | None
    reason: str | None  # unreadable for this reason
    skipped_gauge: bool
    graph: tuple[str, Graph, frozenset[int]] | None
    failed: tuple[str, GraphUnreadable] | None
    root_calls: tuple[tuple[Any, ...], list[Call], Graph] | None


@dataclass(slots=True)
class Layout3:
    """What the 3.x pass found (all empty for a database of older builds)."""

    conversations: dict[str, str] = field(default_factory=dict)  # non-bubble ones
    bubble_ids: set[str] = field(default_factory=set)  # 3.x conversations with bubbles
    metas: dict[str, ConversationMeta] = field(default_factory=dict)
    unreadable: dict[str, int] = field(default_factory=dict)
    unreadable_ids: dict[str, str] = field(default_factory=dict)  # conversation id → reason
    skipped_gauges: set[str] = field(default_factory=set)  # ids: a meter above the bound
    calls: list[Call] = field(default_factory=list)
    # the same calls as lists that stay the same objects while their conversation is unchanged
    parts: list[list[Call]] = field(default_factory=list)
    skip_rowids: frozenset[int] = frozenset()  # agentKv rows reached from decoded roots
    request_ids: frozenset[str] = frozenset()
    projects: dict[str, str] = field(default_factory=dict)  # from headers / composerData
    models: dict[str, str] = field(default_factory=dict)  # composerData.modelConfig
    indexed: bool = False  # a composerHeaders table or ItemTable headers exist
    # composer id → (conversationState, its graph, the agent rows it reached): a refresh
    # decodes only roots that changed (blobs are content-addressed, so a root's bytes fix them)
    graphs: dict[str, tuple[str, Graph, frozenset[int]]] = field(default_factory=dict)
    # ... and the roots that could not be read although every blob was there, and the calls
    # of each decoded root with what they were made from (so a refresh keeps their calls)
    failed: dict[str, tuple[str, GraphUnreadable]] = field(default_factory=dict)
    root_calls: dict[str, tuple[tuple[Any, ...], list[Call], Graph]] = field(default_factory=dict)
    # the rows the composers were parsed from, and the candidates found without a bubble row
    # (with `bubble_ids`: a refresh probes again only conversations whose bubbles may differ)
    composer_rows: ComposerRows = field(default_factory=ComposerRows)
    no_bubbles: frozenset[str] = frozenset()
    skip_changed: frozenset[int] | None = None  # skip_rowids ^ the last pass's (None: unknown)
    # composer id → what the pass made of a conversation without bubbles (see `Outcome`)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    # A full parse's pass over the blobs: the JSON rows, newest first, for the agent stream
    # (the reader takes them: None once used).
    records: JsonRecords | None = None
    # ... and what it remembers for the next one (`memo`; the reader saves it: None once done)
    memo: BlobMemo | None = None
    # A full parse's composerData fields by composer id (`read_composers`), for the bubble
    # conversations' meta (`composer_fields`; the reader takes them: None once used)
    data_fields: dict[str, tuple[Any, ...]] | None = None
    # the workspace storage's fingerprint and project map `metas` were made with, and what
    # they were made of (None: not kept): a refresh with the same ones keeps the metas of
    # the composers it kept (`conversation_metas`)
    metas_of: tuple[str, dict[str, str], MetasMade] | None = None

    def composer_fields(
        self, composer_ids: list[str], places: tuple[int, ...]
    ) -> tuple[dict[str, tuple[Any, ...]], list[str]]:
        """The fields at `places` (`META_PLACES`, `TIMES_PLACES`) of these conversations'
        composerData rows as this pass parsed them, and the ids it has none for (every id
        when no full parse's pass ran)."""
        data = self.data_fields
        if data is None:
            return {}, composer_ids
        found: dict[str, tuple[Any, ...]] = {}
        missing: list[str] = []
        for cid in composer_ids:
            row = data.get(cid)
            if row is None:
                missing.append(cid)
            else:
                found[cid] = tuple([row[i] for i in places])
        return found, missing

    def forget_memos(self) -> None:
        """Drop what only a refresh reuses (a one-shot read): the parsed composer rows, the
        calls of each root, the roots that failed. The graphs stay (their turns are read)."""
        self.composer_rows = ComposerRows()
        self.metas_of = None
        self.root_calls = {}
        self.failed = {}
        self.outcomes = {}

    @property
    def present(self) -> bool:
        """Anything of Cursor 3.x in the database (a refresh then runs the pass again)."""
        return self.indexed or bool(self.conversations or self.bubble_ids)


def has_index(conn: sqlite3.Connection, *, roots: bool | None = None) -> bool:
    """A `composerHeaders` table or global ItemTable headers (Cursor 3.0 and later), or a
    conversation graph without either: Cursor 3.7 writes `conversationState` roots at
    `_v` 16, and a root is read whether or not a header lists it. `roots`: `has_root` as
    the caller knows it (None: look)."""
    if scan.table_exists(conn, "composerHeaders"):
        return True
    if scan.table_exists(conn, "ItemTable"):
        row = conn.execute("SELECT 1 FROM ItemTable WHERE key = 'composer.composerHeaders'")
        if row.fetchone() is not None:
            return True
    return has_root(conn) if roots is None else roots


def has_root(conn: sqlite3.Connection) -> bool:
    """Some composerData holds a non-empty `conversationState` (a root needs blobs: only a
    database with agentKv blobs pays for looking at its composerData rows)."""
    if not scan.table_exists(conn, "cursorDiskKV"):
        return False
    blob = conn.execute(
        "SELECT 1 FROM cursorDiskKV WHERE key >= ? AND key < ? LIMIT 1",
        (scan.AGENT_LO, scan.AGENT_HI),
    ).fetchone()
    if blob is None:
        return False
    row = conn.execute(
        "SELECT 1 FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
        ' AND instr(value, \'"conversationState":"\') > 0'
        ' AND instr(value, \'"conversationState":"~"\') = 0 LIMIT 1'
    ).fetchone()
    return row is not None


def layout3_present(conn: sqlite3.Connection, *, roots: bool | None = None) -> bool:
    """Whether the database has a Cursor 3.x conversation index (cheap: no value is read,
    unless it has neither kind of header: then `has_root`, unless `roots` says it)."""
    return has_index(conn, roots=roots)


def roots_present(conn: sqlite3.Connection) -> bool:
    """Whether some composerData row holds a `conversationState` root (one SQL pass over the
    composerData rows, no JSON decoded): without one the blobs need no pass of their own."""
    return has_root(conn)


def any_json_rows(conn: sqlite3.Connection, rowids: list[int]) -> bool:
    """Whether any of these rows is a JSON value (only those feed the agent stream)."""
    for chunk in scan.in_chunks(rowids):
        row = conn.execute(
            f"SELECT 1 FROM cursorDiskKV WHERE rowid IN ({','.join('?' * len(chunk))})"
            " AND hex(substr(value, 1, 1)) = '7B' LIMIT 1",
            chunk,
        ).fetchone()
        if row is not None:
            return True
    return False
