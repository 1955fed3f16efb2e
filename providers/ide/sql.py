"""SQL over Cursor's `cursorDiskKV`: per-bubble work happens in SQLite, Python sees small tuples.

Every JSON function is guarded by `json_valid` in the WHERE clause: one non-JSON value must
not fail a query. Each reference to `value` costs a copy of the row and
a parse-cache lookup inside SQLite, so the column lists below use as few as they can.
Family scans use `+key` so that SQLite walks the table in ROWID order instead of the key index.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

BUBBLE_LO: Final = "bubbleId:"
BUBBLE_HI: Final = "bubbleId;"
AGENT_LO: Final = "agentKv:blob:"
AGENT_HI: Final = "agentKv:blob;"
COMPOSER_PREFIX: Final = "composerData:"
CALL_KEY_PREFIX: Final = "cursor:bubble:"

# One row per bubble: (rowid, call key, type, createdAt, epoch ms, requestId, input tokens,
# output tokens, model, text, code-block languages). `text` comes as UTF-8 bytes: Python counts
# characters after decoding with replacement (SQLite's length() would fold invalid sequences
# into one character), and for ASCII text len() is free while SQLite's length() walks every
# byte. Languages: a JSON array of the blocks' `languageId` strings (null for others), read by
# index for short arrays (json_each would parse the value again; json_array_length is 0 for
# anything but an array); few distinct arrays exist, so decoding them is memoised.
_TEXT = "json_extract(value, '$.text')"


def _lang(i: int) -> str:
    block = f"'$.codeBlocks[{i}].languageId'"
    return f"CASE WHEN json_type(value, {block}) = 'text' THEN json_extract(value, {block}) END"


# A bubble without `createdAt` (builds <= 1.5.5, 0.50.x) is dated by its
# `timingInfo.clientRpcSendTime` (epoch ms), as an ISO string like `createdAt`'s
# (docs/local-data.md#window-and-scan-budget).
_RPC_MS = "json_extract(value, '$.timingInfo.clientRpcSendTime')"
BUBBLE_COLUMNS: Final = f"""
    rowid, '{CALL_KEY_PREFIX}' || key,
    json_extract(value, '$.type'),
    coalesce(json_extract(value, '$.createdAt'),
             strftime('%Y-%m-%dT%H:%M:%fZ', {_RPC_MS} / 1000.0, 'unixepoch')),
    coalesce(
      CAST(round((julianday(json_extract(value, '$.createdAt')) - 2440587.5) * 86400000.0)
           AS INTEGER),
      CASE WHEN json_extract(value, '$.createdAt') IS NULL
           AND json_type(value, '$.timingInfo.clientRpcSendTime') IN ('integer', 'real')
      THEN CAST({_RPC_MS} AS INTEGER) END),
    json_extract(value, '$.requestId'),
    json_extract(value, '$.tokenCount.inputTokens'),
    json_extract(value, '$.tokenCount.outputTokens'),
    json_extract(value, '$.modelInfo.modelName'),
    CAST({_TEXT} AS BLOB),
    CASE coalesce(json_array_length(value, '$.codeBlocks'), 0)
      WHEN 0 THEN NULL
      WHEN 1 THEN json_array({_lang(0)})
      WHEN 2 THEN json_array({_lang(0)}, {_lang(1)})
      ELSE (SELECT json_group_array(CASE WHEN json_type(c.value, '$.languageId') = 'text'
                                    THEN json_extract(c.value, '$.languageId') END)
            FROM json_each(cursorDiskKV.value -> '$.codeBlocks') AS c WHERE c.type = 'object')
    END
"""
_BUBBLE_FAMILY = "+key >= 'bubbleId:' AND +key < 'bubbleId;'"
_AGENT_FAMILY = "+key >= 'agentKv:blob:' AND +key < 'agentKv:blob;'"

BubbleRow = tuple[Any, ...]


def decode_replace(raw: bytes) -> str:
    """A `text_factory` for TEXT that is not valid UTF-8."""
    return raw.decode("utf-8", "replace")


T = TypeVar("T")
IN_LIST_ROWS: Final = 500  # the values one `IN (...)` statement takes


def in_chunks(items: list[T]) -> Iterator[list[T]]:
    """`items` in slices of `IN_LIST_ROWS`, one statement each."""
    for start in range(0, len(items), IN_LIST_ROWS):
        yield items[start : start + IN_LIST_ROWS]


def fetch(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    """Run a query; on undecodable text, run it again decoding with replacement."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if not is_decode_error(exc):
            raise
    previous = conn.text_factory
    conn.text_factory = decode_replace
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.text_factory = previous


def table_exists(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def has_cursor_table(conn: sqlite3.Connection) -> bool:
    return table_exists(conn, "cursorDiskKV")


def has_rows(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM cursorDiskKV LIMIT 1").fetchone() is not None


def bubble_batches(
    conn: sqlite3.Connection,
    below: int,
    limit: int,
    *,
    guard: bool = True,
    batch: int = 100,
    rowids: Sequence[int] | None = None,
) -> Iterator[list[BubbleRow]]:
    """Up to `limit` bubble rows with ROWID < below, newest first, in batches as SQLite yields
    them (one statement: one short read transaction).

    Paging by ROWID needs no list of ROWIDs up front; SQLite walks the table backwards. Where
    bubbles are a small part of the table (Cursor 3.x keeps its blobs beside them), that walk
    reads mostly other rows: given `rowids` (every bubble's, ascending, `bubble_rowids`) the
    page asks for its rows by ROWID instead. Unguarded (`guard=False`), the page skips
    `json_valid` (a value copy and a parse-cache lookup per row) and raises on a value that is
    not JSON: go on guarded.
    """
    valid = " AND json_valid(value)" if guard else ""
    if rowids is None:
        cursor = conn.execute(
            f"SELECT {BUBBLE_COLUMNS} FROM cursorDiskKV WHERE rowid < ?"
            f" AND {_BUBBLE_FAMILY}{valid} ORDER BY rowid DESC LIMIT ?",
            (below, limit),
        )
    else:
        end = bisect.bisect_left(rowids, below)
        page = rowids[max(0, end - limit) : end]
        cursor = conn.execute(
            f"SELECT {BUBBLE_COLUMNS} FROM cursorDiskKV"
            f" WHERE rowid IN ({','.join('?' * len(page))})"
            f" AND {_BUBBLE_FAMILY}{valid} ORDER BY rowid DESC",
            page,
        )
    while rows := cursor.fetchmany(batch):
        yield rows


@dataclass(slots=True)
class ScanMode:
    """How the bubble pages of one scan are read: `guard` after a value that is not JSON,
    `replace` (text decoded with replacement) after text that is not UTF-8; once set, for
    the rest of the scan."""

    guard: bool = False
    replace: bool = False


def bubble_rows(
    conn: sqlite3.Connection,
    below: int,
    limit: int,
    mode: ScanMode,
    rowids: Sequence[int] | None = None,
) -> Iterator[list[BubbleRow]]:
    """Up to `limit` bubble rows with ROWID < below, newest first, in batches (`bubble_batches`).

    A read that fails on a value that is not JSON, or on text that is not UTF-8, goes on from
    the last row taken, guarded or decoding with replacement (`mode`, which the caller keeps
    for its next pages and whose text factory it restores): the rows given are the same
    whatever failed on the way, and so are the pages a caller cuts them into.
    """
    taken = 0
    while taken < limit:
        try:
            for batch in bubble_batches(
                conn, below, limit - taken, guard=mode.guard, rowids=rowids
            ):
                taken += len(batch)
                below = batch[-1][0]
                yield batch
            return
        except sqlite3.OperationalError as exc:
            if not mode.guard and is_malformed_json(exc):
                mode.guard = True
            elif not mode.replace and is_decode_error(exc):
                mode.replace = True
                conn.text_factory = decode_replace
            else:
                raise


def family_rowids(conn: sqlite3.Connection, lo: str, hi: str, max_rowid: int) -> list[int]:
    """The ROWIDs of the keys in [lo, hi) up to `max_rowid`, ascending (the key index alone
    is read)."""
    rows = conn.execute(
        "SELECT rowid FROM cursorDiskKV WHERE key >= ? AND key < ? AND rowid <= ?",
        (lo, hi, max_rowid),
    ).fetchall()
    return sorted(r[0] for r in rows)


def bubble_rowids(conn: sqlite3.Connection, max_rowid: int) -> list[int]:
    """Every bubble's ROWID up to `max_rowid`, ascending."""
    return family_rowids(conn, BUBBLE_LO, BUBBLE_HI, max_rowid)


def is_decode_error(exc: sqlite3.Error) -> bool:
    """Python's sqlite3 could not decode a TEXT value as UTF-8."""
    return "decode" in str(exc).lower()


def is_malformed_json(exc: sqlite3.Error) -> bool:
    """A JSON function met a value that is not JSON (only unguarded queries raise this)."""
    return "malformed json" in str(exc).lower()


def conversation_bubbles(conn: sqlite3.Connection, composer_id: str) -> list[BubbleRow]:
    """All bubbles of one conversation: one range of the key index."""
    prefix = f"{BUBBLE_LO}{composer_id}"
    return fetch(
        conn,
        f"SELECT {BUBBLE_COLUMNS} FROM cursorDiskKV "
        f"WHERE key >= ? AND key < ? AND json_valid(value) ORDER BY rowid DESC",
        (prefix + ":", prefix + ";"),
    )


def conversation_digest(conn: sqlite3.Connection, composer_id: str) -> bytes:
    """A digest of one conversation's rows as stored: its bubbles' ROWIDs and values and its
    composerData value, nothing decoded (the same digest: no row of it was rewritten in place,
    and none came or went). Reading the values is most of what reading the conversation costs."""
    digest = hashlib.blake2b(digest_size=16)
    prefix = f"{BUBBLE_LO}{composer_id}"
    rows = conn.execute(
        "SELECT rowid, CAST(value AS BLOB) FROM cursorDiskKV WHERE key >= ? AND key < ?"
        " UNION ALL SELECT -1, CAST(value AS BLOB) FROM cursorDiskKV WHERE key = ?",
        (prefix + ":", prefix + ";", COMPOSER_PREFIX + composer_id),
    )
    for rowid, value in rows:
        size = -1 if value is None else len(value)
        digest.update(rowid.to_bytes(8, "little", signed=True))
        digest.update(size.to_bytes(8, "little", signed=True))
        if value:
            digest.update(value)
    return digest.digest()


def bubble_rows_by_rowid(conn: sqlite3.Connection, rowids: Sequence[int]) -> list[BubbleRow]:
    if not rowids:
        return []
    marks = ",".join("?" * len(rowids))
    return fetch(
        conn,
        f"SELECT {BUBBLE_COLUMNS} FROM cursorDiskKV "
        f"WHERE rowid IN ({marks}) AND {_BUBBLE_FAMILY} AND json_valid(value)"
        " ORDER BY rowid DESC",
        list(rowids),
    )


def _composer_fields(
    conn: sqlite3.Connection, composer_ids: Sequence[str], paths: tuple[str, ...]
) -> dict[str, tuple[Any, ...]]:
    """composerId → the JSON `paths` of its composerData row, for the given ids."""
    found: dict[str, tuple[Any, ...]] = {}
    columns = ", ".join(f"json_extract(value, '{p}')" for p in paths)
    ids = list(composer_ids)
    for chunk in in_chunks(ids):
        marks = ",".join("?" * len(chunk))
        rows = fetch(
            conn,
            f"SELECT substr(key, 14), {columns}"
            f" FROM cursorDiskKV WHERE key IN ({marks}) AND json_valid(value)",
            [COMPOSER_PREFIX + cid for cid in chunk],
        )
        for cid, *values in rows:
            found[cid] = tuple(values)
    return found


def composer_times(
    conn: sqlite3.Connection, composer_ids: Sequence[str]
) -> dict[str, tuple[Any, ...]]:
    """composerId → (createdAt, lastUpdatedAt) for the given ids."""
    return _composer_fields(conn, composer_ids, ("$.createdAt", "$.lastUpdatedAt"))


def composer_meta(
    conn: sqlite3.Connection, composer_ids: Sequence[str]
) -> dict[str, tuple[Any, ...]]:
    """composerId → (createdAt, totalUsedTokens, contextTokensUsed, name) for the given ids."""
    paths = (
        "$.createdAt",
        "$.promptTokenBreakdown.totalUsedTokens",
        "$.contextTokensUsed",
        "$.name",
    )
    return _composer_fields(conn, composer_ids, paths)


def agent_page(
    conn: sqlite3.Connection, after: int, upto: int, limit: int
) -> list[tuple[int, str | bytes | None]]:
    """Up to `limit` raw agent values with after < ROWID <= upto, oldest first (one short read).

    Python's JSON decoder reads these faster than SQLite's JSON functions would extract the
    same fields, and counts characters exactly (the walker skips values whose first byte is
    not `{`: binary blobs). Text comes back decoded; a page holding undecodable text is read
    again as bytes, for the walker to decode with replacement.
    """
    sql = (
        "SELECT rowid, {} FROM cursorDiskKV WHERE rowid > ? AND rowid <= ?"
        f" AND {_AGENT_FAMILY} ORDER BY rowid LIMIT ?"
    )
    return _text_else_bytes(conn, sql, (after, upto, limit))


def _text_else_bytes(
    conn: sqlite3.Connection, sql: str, params: Sequence[Any]
) -> list[tuple[int, str | bytes | None]]:
    """`sql` (its `{}` the value column) with values as text, else, when some text does not
    decode, all read again as bytes."""
    try:
        return conn.execute(sql.format("value"), params).fetchall()
    except sqlite3.OperationalError as exc:
        if not is_decode_error(exc):
            raise
    return conn.execute(sql.format("CAST(value AS BLOB)"), params).fetchall()


def agent_rowids(conn: sqlite3.Connection, upto: int) -> list[int]:
    """Every agent row's ROWID up to `upto`, ascending."""
    return family_rowids(conn, AGENT_LO, AGENT_HI, upto)


def agent_rows_by_rowid(
    conn: sqlite3.Connection, rowids: Sequence[int]
) -> list[tuple[int, str | bytes | None]]:
    """The raw agent values of the given ROWIDs, oldest first (one short read), as
    `agent_page` gives them: a row whose key left the family since is not given, and a page
    holding undecodable text is read again as bytes."""
    if not rowids:
        return []
    sql = (
        "SELECT rowid, {} FROM cursorDiskKV"
        f" WHERE rowid IN ({','.join('?' * len(rowids))}) AND {_AGENT_FAMILY} ORDER BY rowid"
    )
    return _text_else_bytes(conn, sql, list(rowids))


def total_count(conn: sqlite3.Connection) -> int:
    """Rows in the table: SQLite sums the cells of the key index's pages, nothing decoded."""
    return int(conn.execute("SELECT count(*) FROM cursorDiskKV").fetchone()[0])


def newest_rowid(conn: sqlite3.Connection) -> int:
    """The largest ROWID of the table (0 when empty): the table b-tree's last cell."""
    row = conn.execute("SELECT max(rowid) FROM cursorDiskKV").fetchone()
    return int(row[0] or 0)


def family_counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """(bubbles, agent blobs, every row) in the table, in the caller's read transaction. The
    key index is walked for the smaller family only: the larger is the table's count less
    the rest (a Cursor 3.x database's agent rows are many and slow to walk)."""
    outside = int(
        conn.execute(
            "SELECT (SELECT count(*) FROM cursorDiskKV WHERE key IS NULL)"
            " + (SELECT count(*) FROM cursorDiskKV WHERE key < ?)"
            " + (SELECT count(*) FROM cursorDiskKV WHERE key >= ? AND key < ?)"
            " + (SELECT count(*) FROM cursorDiskKV WHERE key >= ?)",
            (AGENT_LO, AGENT_HI, BUBBLE_LO, BUBBLE_HI),
        ).fetchone()[0]
    )
    total = total_count(conn)
    families = total - outside
    half = families // 2 + 1
    bubbles = int(
        conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM cursorDiskKV WHERE key >= ? AND key < ? LIMIT ?)",
            (BUBBLE_LO, BUBBLE_HI, half),
        ).fetchone()[0]
    )
    if bubbles < half:
        return bubbles, families - bubbles, total
    agents = int(
        conn.execute(
            "SELECT count(*) FROM cursorDiskKV WHERE key >= ? AND key < ?", (AGENT_LO, AGENT_HI)
        ).fetchone()[0]
    )
    return families - agents, agents, total


def family_count(conn: sqlite3.Connection, lo: str, hi: str, max_rowid: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM cursorDiskKV WHERE key >= ? AND key < ? AND rowid <= ?",
        (lo, hi, max_rowid),
    ).fetchone()
    return int(row[0])


def last_row(conn: sqlite3.Connection) -> tuple[int, str | None]:
    row = fetch(conn, "SELECT rowid, key FROM cursorDiskKV ORDER BY rowid DESC LIMIT 1")
    return (int(row[0][0]), row[0][1]) if row else (0, None)


def key_at(conn: sqlite3.Connection, rowid: int) -> str | None:
    rows = fetch(conn, "SELECT key FROM cursorDiskKV WHERE rowid = ?", (rowid,))
    return rows[0][0] if rows else None


def rows_after(conn: sqlite3.Connection, rowid: int) -> list[tuple[int, str]]:
    """(rowid, key) of every row newer than `rowid` (keys only, no values)."""
    return fetch(
        conn, "SELECT rowid, key FROM cursorDiskKV WHERE rowid > ? ORDER BY rowid", (rowid,)
    )


def request_ids_below(
    conn: sqlite3.Connection, below_rowid: int, candidates: Sequence[str]
) -> set[str]:
    """Which candidate request ids appear on a bubble older than `below_rowid`."""
    if not candidates:
        return set()
    rows = fetch(
        conn,
        "SELECT DISTINCT json_extract(value, '$.requestId') FROM cursorDiskKV"
        " WHERE rowid < ? AND key >= 'bubbleId:' AND key < 'bubbleId;' AND json_valid(value)"
        " AND json_extract(value, '$.requestId') IN (SELECT value FROM json_each(?))",
        (below_rowid, _json_list(candidates)),
    )
    return {r[0] for r in rows if isinstance(r[0], str)}


def _json_list(items: Sequence[str]) -> str:
    return json.dumps(list(items))
