"""One pass over the `agentKv:blob:*` rows for every Cursor 3.x root at once (a full parse).

Looking blobs up by key costs an index probe per blob and reads the table in random order;
a cold parse reaches nearly every blob, so it reads the table once instead, newest row first,
and decodes each blob in the role the roots give it as the row goes by. Cursor writes a
blob's children before the blob (a parent names its children by hash), so newest-first sees
a turn before its messages: what a row asks for is usually still ahead. What was passed
before anything asked for it is looked up by key afterwards, so the order is only a matter
of speed. The JSON records of the pass feed the agent stream too (one decoding per row).
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Final, cast

from codeburn.providers.agent import (
    BAD,
    FLAT_TURN,
    PROMPT,
    ROLES,
    STEP,
    TEXT,
    TURN,
    USER,
    Part,
    Record,
    RootFields,
    TurnPart,
    UserPart,
    decoder,
    part_of,
    record_of,
)
from codeburn.providers.ide import sql as scan
from codeburn.providers.sqlite_ro import open_readonly

# The roles in each bit set of roles, in ROLES order.
_ROLES_IN: Final = tuple(tuple(r for r in ROLES if bits & r) for bits in range(2 * max(ROLES)))
JsonRecords = list[tuple[int, Record]]  # (ROWID, record) of each JSON row, newest first
PAGE_ROWS: Final = 2_000  # rows per read: each page is its own short read transaction
_PAGE_SQL: Final = (
    "SELECT rowid, substr(key, 14), {} FROM cursorDiskKV"
    " WHERE rowid < ? AND +key >= 'agentKv:blob:' AND +key < 'agentKv:blob;'"
    " ORDER BY rowid DESC LIMIT ?"
)
_VALUE: Final = "CAST(value AS BLOB)"
# With the JSON rows decoded elsewhere, TEXT values (Cursor stores JSON as TEXT) are not
# copied into this process at all: typeof() reads only the row header. Such a row's value is
# 0 (any other is bytes, or NULL): a fourth column saying so would cost the pass SQL time.
_VALUE_UNLESS_TEXT: Final = "CASE typeof(value) WHEN 'text' THEN 0 ELSE CAST(value AS BLOB) END"


class ScannedParts:
    """The parts of every blob the roots reach, decoded in one pass (see `Parts`).

    `rowids` collects the rows found since the caller last emptied it (one root's walk).
    """

    reads_ahead = False

    def __init__(
        self, conn: sqlite3.Connection, json_aside: Callable[[], JsonRecords] | None = None
    ) -> None:
        self.conn = conn
        # With `json_aside`, another process decodes the JSON rows (about half of the work,
        # `json_records`) while this one decodes the others; calling it waits for its answer.
        self.json_aside = json_aside
        self.rowids: set[int] = set()
        self.records: JsonRecords = []
        self._prompts_aside: list[str] = []  # JSON rows wanted as prompts, decoded aside
        self._rowid_of: dict[str, int] = {}
        self._parts: dict[int, dict[str, Part]] = {role: {} for role in ROLES}
        self._wanted: dict[str, int] = {}  # blob id → roles asked for, row not read yet
        self._late: dict[str, int] = {}  # ... asked for after its row went by

    @property
    def rowid_of(self) -> dict[str, int]:
        """Blob id → ROWID of every row the pass read (its value not NULL)."""
        return self._rowid_of

    # -- Parts ------------------------------------------------------------------------------

    def part(self, key: str, role: int) -> Part | None:
        found = self._parts[role].get(key)
        if found is not None:  # decoded: its row was read (the common case, ~120,000 a parse)
            self.rowids.add(self._rowid_of[key])
            return found
        rowid = self._rowid_of.get(key)
        if rowid is None:
            return None
        # not reached by the pass's own walk: a damaged or unusual graph
        self._want(key, role)
        self._resolve_late()
        found = self._parts[role].get(key)
        if found is None:
            return None
        self.rowids.add(rowid)
        return found

    def prefetch(self, keys: list[str], role: int) -> None:
        """Nothing to do: the pass has read every row."""

    def forget(self) -> None:
        """Nothing to drop: the parts stay until the pass is done."""

    # -- the pass ---------------------------------------------------------------------------

    def read(
        self, roots: Iterable[RootFields], upto: int, meanwhile: Callable[[], None] | None = None
    ) -> None:
        """Read every blob row with ROWID <= `upto`, decoding what `roots` reach.

        `meanwhile` runs once the rows are read and before the JSON rows are taken from the
        other process (the walk of the turn blobs, which asks for no prompt record)."""
        for fields in roots:
            self._want_keys(fields.prompt_keys, PROMPT)
            self._want_keys(fields.turn_keys, fields.turn_role)
        aside = self.json_aside is not None
        rowid_of, wanted, prompts_aside = self._rowid_of, self._wanted, self._prompts_aside
        steps, step_part = self._parts[STEP], decoder(STEP)
        for rows in _pages(self.conn, upto, _VALUE_UNLESS_TEXT if aside else _VALUE):
            # (`_text_row` and `_row`, their common case inline: ~120,000 rows a cold parse)
            for rowid, key, value in rows:
                if value is None:
                    continue  # a NULL value is no blob (a lookup finds nothing either)
                rowid_of[key] = rowid
                if isinstance(value, int):  # TEXT, decoded aside
                    roles = wanted.pop(key, 0)
                    if roles == PROMPT:
                        prompts_aside.append(key)
                    elif roles:
                        self._text_row(key, roles)
                elif value[:1] == b"{":
                    self._row(rowid, key, value)
                else:
                    roles = wanted.pop(key, 0)
                    if roles == STEP:  # `_decode` of the most common part (~21,000 a parse)
                        steps[key] = step_part(value)
                    elif roles:
                        self._decode(key, value, roles, None)
        self._wanted.clear()  # never stored (at the time of the pass): missing
        self._resolve_late()  # (no prompt is late: the roots asked for every one first)
        if meanwhile is not None:
            meanwhile()
        if self.json_aside is not None:
            self._take_records(self.json_aside())
        self._resolve_late()

    def _take_records(self, records: JsonRecords) -> None:
        if self.records:  # JSON rows stored as BLOBs, decoded here: one list, newest first
            records = sorted(records + self.records, key=itemgetter(0), reverse=True)
        self.records = records
        prompts, rowid_of, by_rowid = self._parts[PROMPT], self._rowid_of, dict(records)
        for key in self._prompts_aside:
            prompts[key] = by_rowid.get(rowid_of[key], BAD)  # not a JSON record: BAD
        self._prompts_aside = []

    def _text_row(self, key: str, roles: int) -> None:
        """A TEXT row (its value left in the database) wanted in `roles`: its record comes
        from the JSON side; read as anything else it is looked up by key afterwards."""
        if roles & PROMPT:
            self._prompts_aside.append(key)
        if roles & ~PROMPT:
            self._late[key] = self._late.get(key, 0) | (roles & ~PROMPT)

    def _row(self, rowid: int, key: str, value: bytes | None) -> None:
        if value is None:
            return  # a NULL value is no blob (a lookup finds nothing either)
        self._rowid_of[key] = rowid
        # (a JSON row stored as a BLOB is decoded here even beside a JSON side: that side
        # reads only TEXT values, as Cursor stores JSON)
        record = record_of(value) if value[:1] == b"{" else None
        if record is not None:
            self.records.append((rowid, record))
        roles = self._wanted.pop(key, 0)
        if roles:
            self._decode(key, value, roles, record)

    def _decode(self, key: str, value: bytes, roles: int, record: Record | None) -> None:
        for role in _ROLES_IN[roles]:
            if key in self._parts[role]:
                continue
            if role == PROMPT:
                found: Part = part_of(value, role) if record is None else record
            else:
                found = part_of(value, role)
            self._parts[role][key] = found
            if role & (TURN | FLAT_TURN) and found is not BAD:
                user_key, step_keys = cast(TurnPart, found)
                if user_key:
                    self._want(user_key, USER)
                self._want_keys(step_keys, STEP)
            elif role == USER and isinstance(found, UserPart) and found.text_key:
                self._want(found.text_key, TEXT)

    def _want_keys(self, keys: list[str], role: int) -> None:
        """`_want` of each blob id ("": no blob; the loop inlined: ~120,000 in a cold parse)."""
        done, rowid_of, wanted, late = self._parts[role], self._rowid_of, self._wanted, self._late
        for key in keys:
            if not key:
                continue
            # One probe of a large dict in the common case (a row not read yet, its id wanted
            # in one role): a part is decoded only once its row is read (`_decode`).
            if key in rowid_of:
                if key not in done:
                    late[key] = late.get(key, 0) | role
            else:
                roles = wanted.setdefault(key, role)
                if roles != role:
                    wanted[key] = roles | role

    def _want(self, key: str, role: int) -> None:
        """(`_want_keys` of one id)"""
        if key in self._rowid_of:
            if key not in self._parts[role]:
                self._late[key] = self._late.get(key, 0) | role
        else:
            roles = self._wanted.setdefault(key, role)
            if roles != role:
                self._wanted[key] = roles | role

    def _resolve_late(self) -> None:
        """Look up by key the rows that went by before a root reached them."""
        while self._late:
            late, self._late = self._late, {}
            keys = list(late)
            for chunk in scan.in_chunks(keys):
                rows = scan.fetch(
                    self.conn,
                    "SELECT substr(key, 14), CAST(value AS BLOB) FROM cursorDiskKV"
                    f" WHERE key IN ({','.join('?' * len(chunk))})",
                    [scan.AGENT_LO + k for k in chunk],
                )
                for key, value in rows:
                    if value is not None:
                        record = record_of(value) if value[:1] == b"{" else None
                        self._decode(key, value, late[key], record)


def _pages(
    conn: sqlite3.Connection, upto: int, value: str = _VALUE
) -> Iterator[list[tuple[int, str, bytes | int | None]]]:
    """(ROWID, blob id, value: 0 for a TEXT value `value` leaves in the database) of the blob
    rows with ROWID <= upto, newest first, a page (one short read) at a time."""
    return _paged(conn, _PAGE_SQL.format(value), upto)


def _paged(conn: sqlite3.Connection, sql: str, upto: int) -> Iterator[list[Any]]:
    """The rows of `sql` (ROWID first; parameters: ROWID below, LIMIT) with ROWID <= upto,
    newest first, PAGE_ROWS at a time."""
    below = upto + 1
    while True:
        rows = scan.fetch(conn, sql, (below, PAGE_ROWS))
        yield rows
        if len(rows) < PAGE_ROWS:
            return
        below = rows[-1][0]


_KEY_SQL: Final = (
    "SELECT substr(key, 14), rowid FROM cursorDiskKV"
    " WHERE key >= 'agentKv:blob:' AND key < 'agentKv:blob;' AND rowid <= ?"
)


def blob_rowids(conn: sqlite3.Connection, upto: int) -> dict[str, int]:
    """Blob id → ROWID of every blob row with ROWID <= upto, from the key index alone (no
    table page is read: a row is taken to hold the bytes its id names)."""
    return dict(scan.fetch(conn, _KEY_SQL, (upto,)))


# Both aggregates step over the same rows in the same order (one pass of one query).
_PACKED_SQL: Final = (
    "SELECT group_concat(substr(key, 14), ' '), group_concat(rowid, ' ') FROM cursorDiskKV"
    " WHERE key >= 'agentKv:blob:' AND key < 'agentKv:blob;' AND rowid <= ?"
)
PackedRowids = tuple[str, bytes]


def packed_blob_rowids(conn: sqlite3.Connection, upto: int) -> PackedRowids | dict[str, int]:
    """`blob_rowids` as two flat values — the ids joined by spaces, the ROWIDs as int64 — for
    another process to send: building and pickling the dict of ~120,000 rows there is most of
    what its parent waits for, and the parent builds the dict (`unpack_rowids`) far faster.
    The dict itself when an id holds a space."""
    keys, rowids = scan.fetch(conn, _PACKED_SQL, (upto,))[0]
    if keys is None:  # no blob row
        return "", b""
    numbers = array("q", map(int, str(rowids).split(" ")))
    if str(keys).count(" ") + 1 != len(numbers):
        return blob_rowids(conn, upto)
    return str(keys), numbers.tobytes()


def unpack_rowids(packed: PackedRowids | dict[str, int]) -> dict[str, int]:
    """The dict of `packed_blob_rowids`' values."""
    if isinstance(packed, dict):
        return packed
    keys, rowids = packed
    if not rowids:
        return {}
    numbers = array("q")
    numbers.frombytes(rowids)
    return dict(zip(keys.split(" "), numbers, strict=True))


# Only the TEXT rows, without their ids: the other rows and the ids are a large share of this
# process's SQL. Values come as str,
# decoded by the sqlite3 module (a page that holds text that is not UTF-8 is read again
# decoding with replacement, `sql.fetch`): as bytes decoded here, the copy would cost more.
_TEXT_PAGE_SQL: Final = (
    "SELECT rowid, value FROM cursorDiskKV"
    " WHERE rowid < ? AND +key >= 'agentKv:blob:' AND +key < 'agentKv:blob;'"
    " AND typeof(value) = 'text' ORDER BY rowid DESC LIMIT ?"
)


# (ROWIDs as int64 bytes, the records' seven fields as seven tuples)
PackedRecords = tuple[bytes, list[tuple[Any, ...]]]


def pack_records(records: JsonRecords) -> PackedRecords:
    """`json_records` as columns for another process to send, equal roles and model names
    one object (a few names shared by ~56,000 records: each one pickled once). Columns pickle
    and unpickle faster than the (ROWID, record) tuples."""
    if not records:
        return b"", []
    rowids, fields = zip(*records, strict=True)
    columns = list(zip(*fields, strict=True))
    for at in (0, 3, 6):  # role, model, served model: each equal value as one object
        same: dict[Any, Any] = {}
        columns[at] = tuple(map(same.setdefault, columns[at], columns[at]))
    return array("q", rowids).tobytes(), columns


def unpack_records(packed: PackedRecords) -> JsonRecords:
    """The records of `pack_records`."""
    raw, columns = packed
    if not raw:
        return []
    rowids = array("q")
    rowids.frombytes(raw)
    # tuple.__new__ makes each Record without the constructor's Python-level call.
    records = map(partial(tuple.__new__, Record), zip(*columns, strict=True))
    return list(zip(rowids, records, strict=True))


def json_records(db_path: Path, upto: int) -> JsonRecords:
    """(ROWID, record) of every JSON blob row stored as TEXT with ROWID <= upto, newest
    first (the pass decodes the others: the protobuf rows and any JSON stored as a BLOB)."""
    out: JsonRecords = []
    with open_readonly(db_path) as conn:
        for rows in _paged(conn, _TEXT_PAGE_SQL, upto):
            for rowid, value in rows:
                if value[:1] == "{":
                    record = record_of(value)
                    if record is not None:
                        out.append((rowid, record))
    return out
