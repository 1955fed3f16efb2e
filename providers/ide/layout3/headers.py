"""Which conversations a Cursor 3.x global database lists, and what it says about each.

Sources (issue 8): the `composerHeaders` table (columns selected by name: builds have 9 or
10, in different orders), the global `ItemTable['composer.composerHeaders']`, and the
`composerData:<id>` rows. Per conversation: project, model, created/updated times, parent.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, TypeGuard

from codeburn.providers.gauges import first_gauge
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.workspaces import path_project, project_name
from codeburn.providers.localtime import valid_ms

HEADER_COLUMNS: Final = ("composerId", "workspaceId", "createdAt", "lastUpdatedAt", "value")
DRAFT_IDS: Final = frozenset({"empty-state-draft"})

# composerData fields, each guarded by the WHERE clause's json_valid (docs/local-data.md#schema).
_DATA_FIELDS: Final = (
    "$._v", "$.createdAt", "$.lastUpdatedAt", "$.promptTokenBreakdown.totalUsedTokens",
    "$.contextTokensUsed", "$.modelConfig.modelName", "$.workspaceIdentifier.uri.external",
    "$.workspaceIdentifier.uri.fsPath", "$.workspaceIdentifier.id",
    "$.trackedGitRepos[0].repoPath", "$.subagentInfo.parentComposerId",
    "$.modelConfig.selectedModels[0].modelId", "$.modelConfig.selectedModels[0].parameters",
    "$.name",
)  # fmt: skip
_DATA_FAMILY: Final = "FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
_DATA_SQL: Final = (
    "SELECT rowid, "
    + ", ".join(f"json_extract(value, '{f}')" for f in _DATA_FIELDS)
    + ", CASE json_type(value, '$.conversationState') WHEN 'text'"
    " THEN json_extract(value, '$.conversationState') END,"
    " coalesce(json_type(value, '$.blobEncryptionKey'), 'null') != 'null'"
    f" {_DATA_FAMILY} AND json_valid(value)"
)


def _place(path: str) -> int:
    return 1 + _DATA_FIELDS.index(path)  # after the ROWID


# Where the fields of `sql.composer_meta` and `sql.composer_times` are in a parsed row: the
# same `json_extract` of the same paths, under the same `json_valid` guard.
META_PLACES: Final = tuple(
    map(_place, ("$.createdAt", "$.promptTokenBreakdown.totalUsedTokens",
                 "$.contextTokensUsed", "$.name"))
)  # fmt: skip
TIMES_PLACES: Final = (_place("$.createdAt"), _place("$.lastUpdatedAt"))
_BAD_DATA_SQL: Final = (
    f"SELECT rowid {_DATA_FAMILY} AND value IS NOT NULL AND NOT json_valid(value)"
)
# Every composerData row as it is stored: a refresh parses only the rows whose bytes changed.
_RAW_DATA_SQL: Final = (
    f"SELECT substr(key, 14), rowid, typeof(value), CAST(value AS BLOB) {_DATA_FAMILY}"
)
# Which composerData rows exist, from the key index alone (no row is read).
_DATA_KEYS_SQL: Final = f"SELECT substr(key, 14), rowid {_DATA_FAMILY}"
_RAW_BY_ROWID_SQL: Final = (
    "SELECT substr(key, 14), rowid, typeof(value), CAST(value AS BLOB) FROM cursorDiskKV"
    " WHERE rowid IN ({})"
)
_NOT_JSON: Final = "not-json"
Parsed = tuple[Any, ...] | str | None  # a composerData row's fields, _NOT_JSON, or nothing


@dataclass(slots=True)
class Composer:
    """One listed conversation, merged from every source that names it."""

    composer_id: str
    listed: bool = False  # a header row or an ItemTable header
    has_data: bool = False  # a JSON composerData row
    bad_data: bool = False  # a composerData row that is not JSON
    version: int | None = None
    state: str | None = None  # conversationState when it is a string
    encrypted: bool = False  # blobEncryptionKey is set
    meter: int = 0  # totalUsedTokens, else contextTokensUsed (within the gauge bound)
    skipped_gauge: bool = False  # one of them above the bound
    model: str | None = None
    created_ms: int | None = None
    updated_ms: int | None = None
    folder: str | None = None  # project from a path or URI
    workspace_id: str | None = None
    tracked_repo: str | None = None
    parent_id: str | None = None
    title: str | None = None

    def take_times(self, created: Any, updated: Any) -> None:
        self.created_ms = self.created_ms or valid_ms(created)
        self.updated_ms = self.updated_ms or valid_ms(updated)


@dataclass(slots=True)
class ComposerRows:
    """What the last pass parsed, by the stored bytes it came from (parsing composerData rows
    with json_extract costs a refresh far more than reading their raw bytes)."""

    # The stored bytes are compared by their digest (`stored_digest`): what a long-lived
    # reader keeps is then ~50 bytes a row, not the row (~1.3 kB a composerData row).
    items: tuple[bytes | None, list[Any]] = (None, [])  # ItemTable headers → their list
    # composer id → (ROWID, typeof(value), value's digest, its fields | _NOT_JSON | None)
    data: dict[str, tuple[int, str, bytes | None, Parsed]] = field(default_factory=dict)
    # composer id → (everything it was merged from, the Composer, how many of those sources
    # are header rows and ItemTable headers: they come first): unchanged ones are reused
    composers: dict[str, tuple[tuple[Any, ...], Composer, int]] = field(default_factory=dict)
    # the last pass's header rows, ItemTable headers, header sources by composer, composerData
    # listing and result: a refresh whose reads match them returns that result (merging every
    # composer again with its meta is a large share of a refresh)
    last: _LastPass | None = None
    same: bool = False  # this pass returned the last one's result


class _LastPass(NamedTuple):
    headers: list[tuple[Any, ...]]
    items: list[Any]
    heads: dict[str, tuple[tuple[str, Any], ...]]
    listed: list[tuple[Any, int]]
    found: dict[str, Composer]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _load(raw: Any) -> Any:
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _take_header(comp: Composer, head: Any) -> None:
    """Fields of a header JSON (`{"type": "head", …}`)."""
    if not isinstance(head, dict):
        return
    comp.take_times(head.get("createdAt"), head.get("lastUpdatedAt"))
    ident = head.get("workspaceIdentifier")
    if isinstance(ident, dict):
        uri = ident.get("uri")
        if isinstance(uri, dict) and comp.folder is None:
            external, fs_path = _text(uri.get("external")), _text(uri.get("fsPath"))
            comp.folder = (
                project_name(external) if external else path_project(fs_path) if fs_path else None
            )
        comp.workspace_id = comp.workspace_id or _text(ident.get("id"))
    info = head.get("subagentInfo")
    if isinstance(info, dict):
        comp.parent_id = comp.parent_id or _text(info.get("parentComposerId"))
    comp.title = comp.title or _text(head.get("name"))


def _header_rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    if not scan.table_exists(conn, "composerHeaders"):
        return []
    present = {str(r[1]) for r in conn.execute("PRAGMA table_info(composerHeaders)")}
    if "composerId" not in present:
        return []
    cols = [
        ("CAST(value AS BLOB)" if c == "value" else f'"{c}"') if c in present else "NULL"
        for c in HEADER_COLUMNS
    ]
    return scan.fetch(conn, f"SELECT {', '.join(cols)} FROM composerHeaders")


def _item_headers(conn: sqlite3.Connection, memo: ComposerRows) -> list[Any]:
    if not scan.table_exists(conn, "ItemTable"):
        return []
    rows = conn.execute(
        "SELECT CAST(value AS BLOB) FROM ItemTable WHERE key = 'composer.composerHeaders'"
    ).fetchall()
    raw = rows[0][0] if rows else None
    digest = stored_digest(raw)
    if digest is not None and memo.items[0] == digest:
        return memo.items[1]
    payload = _load(raw)
    heads = payload.get("allComposers") if isinstance(payload, dict) else None
    found = heads if isinstance(heads, list) else []
    memo.items = (digest, found)
    return found


def stored_digest(raw: bytes | None) -> bytes | None:
    """What the composer memo keeps of stored bytes to tell whether they changed (BLAKE2b,
    16 bytes: a change that keeps the digest is not a practical concern)."""
    return None if raw is None else hashlib.blake2b(raw, digest_size=16).digest()


def _in_rowids(sql: str, rowids: list[int]) -> str:
    return f"{sql} AND rowid IN ({','.join('?' * len(rowids))})"


def _parse_data(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, tuple[Any, ...] | str]:
    """composerData fields of these rows, or _NOT_JSON (SQLite's own JSON functions decide)."""
    parsed: dict[int, tuple[Any, ...] | str] = {}
    for chunk in scan.in_chunks(rowids):
        for row in scan.fetch(conn, _in_rowids(_DATA_SQL, chunk), chunk):
            parsed[int(row[0])] = tuple(row)
        # Only the rows that were not JSON are looked at again (json_valid parses each row,
        # and nearly every row is JSON).
        rest = [rowid for rowid in chunk if rowid not in parsed]
        if rest:
            for (rowid,) in scan.fetch(conn, _in_rowids(_BAD_DATA_SQL, rest), rest):
                parsed[int(rowid)] = _NOT_JSON
    return parsed


_Stored = tuple[list[tuple[Any, int]], list[tuple[Any, int, str, bytes | None]]]


def _stored_rows(
    conn: sqlite3.Connection, memo: ComposerRows, settled: Collection[str] | None
) -> _Stored:
    """(composer id, ROWID) of every composerData row in key order, and the rows to look at
    as stored: all of them, or (a refresh) all but the `settled` ones kept at the same ROWID."""
    if settled is None:
        stored = scan.fetch(conn, _RAW_DATA_SQL)
        return [(row[0], row[1]) for row in stored], stored
    listed = scan.fetch(conn, _DATA_KEYS_SQL)
    before = memo.data
    wanted = [
        rowid
        for cid, rowid in listed
        if cid not in settled or (kept := before.get(cid)) is None or kept[0] != rowid
    ]
    stored = []
    for chunk in scan.in_chunks(wanted):
        stored += scan.fetch(conn, _RAW_BY_ROWID_SQL.format(",".join("?" * len(chunk))), chunk)
    return listed, stored


def _data_rows(
    conn: sqlite3.Connection,
    memo: ComposerRows,
    settled: Collection[str] | None = None,
    untouched: set[str] | None = None,
    read: _Stored | None = None,
) -> list[tuple[Any, Parsed]]:
    """(composer id, its fields | _NOT_JSON | None) of every composerData row, in key order;
    only rows whose stored bytes differ from the last pass's are parsed again. `settled`
    (a refresh): conversations whose rows are taken as they were when still at their ROWID
    (see `settled_composers`); the settled ones taken so are added to `untouched`. `read`:
    `_stored_rows` of these `settled`, read already."""
    listed, stored = read if read is not None else _stored_rows(conn, memo, settled)
    looked_at = {row[0]: row for row in stored}
    before, data = memo.data, {}
    out: list[tuple[Any, Parsed]] = []
    stale: list[tuple[int, tuple[Any, int, str, bytes | None], bytes | None]] = []
    for cid, rowid in listed:
        row = looked_at.get(cid)
        kept = before.get(cid)
        if row is None:
            if kept is not None and kept[0] == rowid:  # settled, at the same ROWID
                data[cid] = kept
                out.append((cid, kept[3]))
                if untouched is not None and settled is not None and cid in settled:
                    untouched.add(cid)
            else:  # written again between the two reads: read next time
                out.append((cid, None))
            continue
        digest = stored_digest(row[3])
        if kept is not None and kept[2] == digest and kept[1] == row[2]:
            data[cid] = (row[1], row[2], digest, kept[3])
            out.append((cid, kept[3]))
        else:
            stale.append((len(out), row, digest))
            out.append((cid, None))
    fresh = _parse_data(conn, [row[1] for _, row, _ in stale]) if stale else {}
    for i, (cid, rowid, kind, _raw), digest in stale:
        if rowid in fresh or kind == "null":  # else written again since: read next time
            parsed = fresh.get(rowid)
            data[cid] = (rowid, kind, digest, parsed)
            out[i] = (cid, parsed)
    memo.data = data
    return out


def _parsed_rows(conn: sqlite3.Connection, memo: ComposerRows) -> list[tuple[Any, Parsed]]:
    """`_data_rows` of a pass nobody keeps: every row parsed, no digest kept."""
    listed = scan.fetch(conn, _DATA_KEYS_SQL)
    parsed = _parse_data(conn, [rowid for _, rowid in listed])
    memo.data = {}
    return [(cid, parsed.get(rowid)) for cid, rowid in listed]


def _unchanged_rows(memo: ComposerRows, settled: set[str], read: _Stored) -> bool:
    """Every listed composerData row is as the last pass took it: settled at its ROWID, or
    read again with the same type and digest (what `_data_rows` would keep as it was)."""
    listed, stored = read
    before = memo.data
    looked_at = {row[0]: row for row in stored}
    for cid, rowid in listed:
        kept = before.get(cid)
        if kept is None or kept[0] != rowid:
            return False
        row = looked_at.get(cid)
        if row is None:
            if cid not in settled:
                return False
        elif row[1] != rowid or row[2] != kept[1] or stored_digest(row[3]) != kept[2]:
            return False
    return True


def _head_sources(headers: list[tuple[Any, ...]], items: list[Any]) -> dict[str, list[Any]]:
    """Each conversation's header rows, then its ItemTable headers, as `_merged` takes them."""
    inputs: dict[str, list[tuple[str, Any]]] = {}
    for row in headers:
        if _is_id(row[0]):
            inputs.setdefault(row[0], []).append(("row", row))
    for head in items:
        cid = head.get("composerId") if isinstance(head, dict) else None
        if _is_id(cid):
            inputs.setdefault(cid, []).append(("item", head))
    return inputs


def _as_last_pass(
    conn: sqlite3.Connection,
    memo: ComposerRows,
    headers: list[tuple[Any, ...]],
    items: list[Any],
    before_ms: int,
) -> tuple[set[str] | None, _Stored | None]:
    """A refresh's settled conversations and `_stored_rows` of them, when its header sources
    are the last pass's (else (None, None)); `memo.same` when its composerData rows are too."""
    last = memo.last
    if last is None or last.headers != headers or last.items != items:
        return None, None
    # the same header sources: the same conversations are settled as `read_composers` finds
    settled = settled_composers(memo, last.heads, before_ms)
    read = _stored_rows(conn, memo, settled)
    memo.same = read[0] == last.listed and _unchanged_rows(memo, settled, read)
    return settled, read


def settled_composers(
    memo: ComposerRows, heads: Mapping[str, Sequence[tuple[str, Any]]], before_ms: int
) -> set[str]:
    """Conversations whose composerData a refresh need not read again: listed by the same
    header rows as at the last pass and last updated before `before_ms`. Cursor writes a
    conversation's header whenever it writes its composerData with a new turn; any other
    rewrite in place of an old conversation's row waits for the next full parse (at most an
    hour), as an old conversation's bubbles rewritten in place do."""
    settled: set[str] = set()
    for cid, (made_of, comp, listed) in memo.composers.items():
        newest = max(comp.updated_ms or 0, comp.created_ms or 0)
        if not newest or newest >= before_ms:
            continue
        now = heads.get(cid)
        if (now is None and not listed) or (
            now is not None and len(now) == listed and made_of[:listed] == tuple(now)
        ):
            settled.add(cid)
    return settled


def _is_id(cid: Any) -> TypeGuard[str]:
    return isinstance(cid, str) and bool(cid) and cid not in DRAFT_IDS


def _merged(cid: str, inputs: tuple[Any, ...]) -> Composer:
    """One composer from its sources, in the order: header rows, ItemTable headers, data."""
    comp = Composer(cid)
    for kind, value in inputs:
        if kind == "row":
            _, workspace_id, created, updated, head = value
            comp.listed = True
            comp.workspace_id = _text(workspace_id)
            comp.take_times(created, updated)
            _take_header(comp, _load(head))
        elif kind == "item":
            comp.listed = True
            _take_header(comp, value)
        elif kind == "data":
            _take_data(comp, value)
        elif not comp.has_data:  # a composerData row that is not JSON
            comp.bad_data = True
    return comp


def read_composers(
    conn: sqlite3.Connection,
    memo: ComposerRows | None = None,
    *,
    settled_before_ms: int | None = None,
    remember: bool = True,
    fields: dict[str, tuple[Any, ...]] | None = None,
) -> tuple[dict[str, Composer], bool]:
    """Every conversation the database lists, and whether any Cursor 3.x index exists.

    `memo` (kept by the caller between passes, updated here) spares parsing rows that did not
    change and merging composers whose sources did not; the result is the same without it.
    `settled_before_ms` (a refresh): the composerData rows of conversations last updated
    before it, under unchanged headers, are not read again (`settled_composers`).
    `remember=False` (a read kept by nobody): the rows are parsed without keeping their
    digests, so their stored bytes are not read as well.
    `fields`: filled with the parsed fields of every JSON composerData row, by composer id
    (see `META_PLACES`).
    """
    memo = memo if memo is not None else ComposerRows()
    headers = _header_rows(conn)
    items = _item_headers(conn, memo)
    indexed = bool(headers or items)
    memo.same = False
    settled, read = None, None
    if settled_before_ms is not None and remember and fields is None:
        settled, read = _as_last_pass(conn, memo, headers, items, settled_before_ms)
        if memo.same and memo.last is not None:
            return memo.last.found, indexed
    inputs = _head_sources(headers, items)
    heads = {cid: tuple(sources) for cid, sources in inputs.items()} if remember else {}
    listed = {cid: len(sources) for cid, sources in inputs.items()}
    untouched = set[str]()
    if settled_before_ms is not None and settled is None:
        settled = settled_composers(memo, inputs, settled_before_ms)
    if remember:
        read = read if read is not None else _stored_rows(conn, memo, settled)
        rows = _data_rows(conn, memo, settled, untouched, read)
    else:
        rows = _parsed_rows(conn, memo)
    for cid, parsed in rows:
        if isinstance(parsed, tuple):
            if fields is not None:
                fields[cid] = parsed
            if _is_id(cid):
                inputs.setdefault(cid, []).append(("data", parsed))
    for cid, parsed in rows:
        if parsed == _NOT_JSON and cid in inputs:
            inputs[cid].append(("bad", None))
    found: dict[str, Composer] = {}
    merged: dict[str, tuple[tuple[Any, ...], Composer, int]] = {}
    before = memo.composers
    for cid, sources in inputs.items():
        kept = before.get(cid)
        if kept is None or cid not in untouched:
            made_of = tuple(sources)
            if kept is None or kept[0] != made_of:
                kept = (made_of, _merged(cid, made_of), listed.get(cid, 0))
        # else: the same header sources and the same data row as the last pass
        found[cid] = kept[1]
        merged[cid] = kept
    memo.composers = merged
    memo.last = _LastPass(headers, items, heads, read[0], found) if read is not None else None
    return found, indexed


def fast_variant(model: str | None, selected: str | None, parameters: Any) -> str | None:
    """`modelConfig.modelName`, as its `-fast` variant when the selected model (the same one,
    or the only one named) carries the parameter `{id: "fast", value: true | "true"}`."""
    base = model if model and model != "default" else selected
    if not base or base == "default" or selected not in (None, base) or base.endswith("-fast"):
        return model
    try:
        params = json.loads(parameters) if isinstance(parameters, str) else None
    except (ValueError, RecursionError):
        return model
    fast = isinstance(params, list) and any(
        isinstance(p, dict) and p.get("id") == "fast" and p.get("value") in (True, "true")
        for p in params
    )
    return f"{base}-fast" if fast else model


def _take_data(comp: Composer, row: tuple[Any, ...]) -> None:
    (_, version, created, updated, total, context, model, external, fs_path, workspace_id,
     repo, parent, selected, parameters, name, state, encrypted) = row  # fmt: skip
    comp.has_data = True
    comp.version = version if isinstance(version, int) and not isinstance(version, bool) else None
    comp.take_times(created, updated)
    comp.meter, comp.skipped_gauge = first_gauge(_count(total), _count(context))
    comp.model = fast_variant(_text(model), _text(selected), parameters)
    comp.state = state if isinstance(state, str) else None
    comp.encrypted = bool(encrypted)
    if comp.folder is None and (_text(external) or _text(fs_path)):
        comp.folder = project_name(external) if _text(external) else path_project(fs_path)
    comp.workspace_id = comp.workspace_id or _text(workspace_id)
    comp.tracked_repo = _text(repo)
    comp.parent_id = comp.parent_id or _text(parent)
    comp.title = _text(name) or comp.title
