"""Cursor's usage export (CSV): parsing, event identity, and the calls an exported row stands for.

The same bytes arrive from a manual `codeburn import cursor FILE.csv` and from the sync client, so
both go through `parse_csv`; the store keeps the rows, and `row_to_call` prices them at serve time.
Header variants of real exports are read by name (`Output`, `Cost ($)`, `Requests`, `Tokens`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, BinaryIO, Final, TextIO

from codeburn.providers.calls import (
    CURSOR,
    GROKBOT,
    GROKBOT_IMPORTED_PROJECT,
    IMPORTED_PROJECT,
    USER_API_KEY,
    Call,
)
from codeburn.providers.errors import CodeBurnError
from codeburn.providers.exports.digests import DigestIndex
from codeburn.providers.localtime import EPOCH, local_day, local_midnight_ms
from codeburn.providers.pricing import cost_of

if TYPE_CHECKING:
    from codeburn.providers.exports.usage_events import EventDetail

DATE: Final = "Date"
USER: Final = "User"
CLOUD_AGENT_ID: Final = "Cloud Agent ID"
AUTOMATION_ID: Final = "Automation ID"
KIND: Final = "Kind"
MODEL: Final = "Model"
MAX_MODE: Final = "Max Mode"
CACHE_WRITE: Final = "Input (w/ Cache Write)"
INPUT: Final = "Input (w/o Cache Write)"
CACHE_READ: Final = "Cache Read"
OUTPUT: Final = "Output Tokens"
TOTAL: Final = "Total Tokens"
COST: Final = "Cost"
REQUESTS: Final = "Requests"
TOKENS: Final = "Tokens"

# The columns of the current export, in its order.
CANONICAL_COLUMNS: Final = (
    DATE,
    CLOUD_AGENT_ID,
    AUTOMATION_ID,
    KIND,
    MODEL,
    MAX_MODE,
    CACHE_WRITE,
    INPUT,
    CACHE_READ,
    OUTPUT,
    TOTAL,
    COST,
)
TOKEN_COLUMNS: Final = (CACHE_WRITE, INPUT, CACHE_READ, OUTPUT)
REQUIRED_COLUMNS: Final = (DATE, MODEL, *TOKEN_COLUMNS)
KNOWN_COLUMNS: Final = (*CANONICAL_COLUMNS, USER, REQUESTS, TOKENS)
# Other spellings of the same column in real exports (older layouts).
COLUMN_ALIASES: Final = {"output": OUTPUT, "cost ($)": COST}
HASH_SEPARATOR: Final = "\x1f"
KEY_PREFIX: Final = "cursor-import:"
CURSOR_AUTO: Final = "cursor-auto"
# Models the export names without saying which model served them: priced, but estimated.
UNNAMED_MODELS: Final = frozenset({CURSOR_AUTO, "agent_review"})

_REPEATED_COLUMNS: Final = frozenset(
    {CLOUD_AGENT_ID, AUTOMATION_ID, KIND, MODEL, MAX_MODE, COST, REQUESTS, USER}
)
_EXPORT_HINT = "export it at cursor.com/dashboard → Usage → Export CSV"
_MAX_TOKEN_DIGITS = 20  # characters, commas included: bounds int() before the checks below
# What Cursor can bill for one request: real rows reach 75 M cache-read tokens and a few dollars,
# so a row beyond these is garbage (a damaged or forged file), never heavy use.
MAX_ROW_TOKENS: Final = 10**12
MAX_ROW_COST: Final = 1_000_000.0
_EARLIEST_YEAR = 2000
_LATEST_YEAR = 2100
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?", re.IGNORECASE
)
_EPOCH_MS = re.compile(r"\d{12,14}")
_TOKENS = re.compile(r"\d+|\d{1,3}(,\d{3})+")
_DOLLARS = re.compile(r"\$?\s*(\d{1,3}(,\d{3})+(\.\d*)?|\d+(\.\d*)?|\.\d+)")


class CsvFormatError(CodeBurnError, ValueError):
    """The bytes are not a usable Cursor usage export; nothing from them may be stored."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One export row: the non-personal cells, tokens as numbers, and the event's identity.

    `hash` is the identity (see `identity`), not a hash of every cell: Cursor re-renders Kind and
    Cost of the same event between exports. `user` (a team export's e-mail) is kept in memory
    only, to pick one person's rows; it is never stored.
    """

    date: str
    timestamp_ms: int
    cloud_agent_id: str
    automation_id: str
    kind: str
    model: str
    max_mode: str
    cache_write: int
    input: int
    cache_read: int
    output: int
    total: int
    cost: str
    hash: str
    requests: str = ""
    tokens_only: bool = False
    line: int = field(default=0, compare=False)
    user: str = field(default="", compare=False, repr=False)

    @property
    def tokens(self) -> int:
        return self.cache_write + self.input + self.cache_read + self.output


def row_hash(cells: Sequence[str]) -> str:
    """First 32 hex digits of sha256 over the cells joined with U+001F."""
    joined = HASH_SEPARATOR.join(cells)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def identity(timestamp_ms: int, model: str, tokens: Sequence[int], occurrence: int = 1) -> str:
    """An event's identity across re-exports: its time (ms), Model and four token cells.

    The n-th identical row of one file (n > 1) is a distinct event and gets n in its identity.
    """
    cells = [str(timestamp_ms), model.strip(), *map(str, tokens)]
    if occurrence > 1:
        cells.append(f"#{occurrence}")
    return row_hash(cells)


def is_not_charged(kind: str, cost: str) -> bool:
    """Rows Cursor did not charge: `Not Charged`/`No Charge`, `Aborted`, `Errored` with `-`."""
    lowered = kind.casefold()
    if "not charged" in lowered or "no charge" in lowered or lowered.startswith("aborted"):
        return True
    return "errored" in lowered and cost.strip() in ("-", "")


def is_user_api_key(kind: str) -> bool:
    """Rows billed by the user's own provider key, not by Cursor."""
    return kind.strip().casefold() == "user api key"


def parse_export_date(text: str) -> int | None:
    """Epoch ms of a Date cell (ISO with `Z`/offset, naive = UTC, date only = local midnight)."""
    value = text.strip().strip("\"'").strip()
    if _DATE_ONLY.fullmatch(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return None
        if not _EARLIEST_YEAR <= day.year <= _LATEST_YEAR:
            return None
        return local_midnight_ms(day)
    if _EPOCH_MS.fullmatch(value):
        ms = int(value)
        return ms if _plausible(ms) else None
    if not _DATE_TIME.fullmatch(value):
        return None
    try:
        moment = datetime.fromisoformat(value.upper())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if not _EARLIEST_YEAR <= moment.year <= _LATEST_YEAR:
        return None
    ms = (moment - EPOCH) // timedelta(milliseconds=1)
    return ms if _plausible(ms) else None


_LOW_MS: Final = (datetime(_EARLIEST_YEAR, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
_HIGH_MS: Final = (datetime(_LATEST_YEAR, 12, 31, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)


def _plausible(ms: int) -> bool:
    return _LOW_MS <= ms <= _HIGH_MS


def normalise_model(raw: str) -> tuple[str, str]:
    """(provider, model) for an export's Model cell."""
    model = raw.strip()
    lowered = model.lower()
    if lowered in ("auto", "default"):
        return CURSOR, CURSOR_AUTO
    if lowered == "grok-bot" or lowered.startswith("grok-bot-"):
        return GROKBOT, model
    if lowered.startswith("cursor-grok-"):
        return CURSOR, model[len("cursor-") :]
    return CURSOR, model


def billed_amount(cost: str) -> float | None:
    """The dollars of a plain amount (`$1.25`, `0.11`, `$1,234.50`); None for `Included`, `Free`,
    `-`, ..."""
    match = _DOLLARS.fullmatch(cost.strip())
    return float(match.group(1).replace(",", "")) if match else None


def parse_csv(data: bytes) -> list[UsageRow]:
    """Every row of an export, or CsvFormatError naming the first problem (and its line)."""
    return list(iter_csv(io.BytesIO(data)))


def iter_csv(handle: BinaryIO) -> Iterator[UsageRow]:
    """`parse_csv` of an open export, one row at a time: a consumer need not hold the rows, and
    the bytes are decoded as they are read (never held whole, nor as text). CsvFormatError
    naming the first problem can come after rows were given: nothing may be stored before the
    last row was read."""
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
    try:
        yield from _rows(text)
    except UnicodeDecodeError as exc:
        raise CsvFormatError(
            f"not a Cursor usage export: the file is not UTF-8 text; {_EXPORT_HINT}"
        ) from exc
    except csv.Error as exc:
        raise CsvFormatError(f"not a readable CSV file ({exc}); {_EXPORT_HINT}") from exc


def _rows(text: TextIO) -> Iterator[UsageRow]:
    record: list[str] = []  # the physical lines of the record being read
    reader = csv.reader(_remembered(text, record), strict=False)
    columns = _header(reader)
    width = len(columns)
    last_line = reader.line_num
    seen = DigestIndex()  # the base identities, and how often each came (`counts`)
    counts = array("I")
    raw: list[str] = []
    record.clear()
    # Cells that repeat row after row are kept as one object each (a large export has
    # hundreds of thousands of rows, each with the same few kinds, models and costs).
    repeated = [n for n, name in enumerate(columns) if name in _REPEATED_COLUMNS]
    memo: dict[str, str] = {}
    for cells in reader:
        line = last_line + 1
        last_line = reader.line_num
        raw = record.copy()
        record.clear()
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != width:
            raise CsvFormatError(
                f"line {line}: {len(cells)} cells where the header has {width}; "
                "the file looks cut short or damaged, nothing was imported",
                line,
            )
        for n in repeated:
            cells[n] = memo.setdefault(cells[n], cells[n])
        row = _row(dict(zip(columns, cells, strict=True)), line)
        position, new = seen.add(bytes.fromhex(row.hash))
        if new:
            counts.append(1)
        else:
            counts[position] += 1
            occurrence = counts[position]
            row = replace(
                row,
                hash=identity(
                    row.timestamp_ms,
                    row.model,
                    (row.cache_write, row.input, row.cache_read, row.output),
                    occurrence,
                ),
            )
        yield row
    if raw and _open_quote("".join(raw)):
        # The csv module (not strict) takes a quoted cell cut at the end of the file as it is:
        # a `"0.08"` cut to `"0.` would be stored as $0.
        raise CsvFormatError(
            f"line {line}: a quoted cell is not closed at the end of the file; the file looks "
            "cut short, nothing was imported",
            line,
        )


def _remembered(lines: Iterator[str], record: list[str]) -> Iterator[str]:
    for text in lines:
        record.append(text)
        yield text


def _open_quote(record: str) -> bool:
    """Whether one CSV record ends inside a quoted field (the csv module's non-strict rules)."""
    quoted = after_quote = False
    start = True
    for ch in record:
        if quoted:
            if ch == '"':
                quoted, after_quote = False, True
        elif after_quote and ch == '"':  # a doubled quote inside the quoted field
            quoted, after_quote = True, False
        elif ch in ",\r\n":
            start, after_quote = True, False
        else:
            quoted = start and ch == '"'
            start = after_quote = False
    return quoted


def _header(reader: Iterator[list[str]]) -> list[str]:
    for cells in reader:
        if any(cell.strip() for cell in cells):
            columns = [_canonical_name(cell) for cell in cells]
            break
    else:
        raise CsvFormatError(f"not a Cursor usage export: the file is empty; {_EXPORT_HINT}")
    required = REQUIRED_COLUMNS if TOKENS not in columns else (DATE, MODEL)
    missing = [name for name in required if name not in columns]
    if missing:
        raise CsvFormatError(
            f"not a Cursor usage export: no {', '.join(missing)} column; {_EXPORT_HINT}", 1
        )
    seen: set[str] = set()
    for name in columns:
        if name in seen and name in KNOWN_COLUMNS:
            raise CsvFormatError(f"not a Cursor usage export: column {name} appears twice", 1)
        seen.add(name)
    return columns


def _canonical_name(cell: str) -> str:
    name = " ".join(cell.split())
    folded = name.casefold()
    for known in KNOWN_COLUMNS:
        if folded == known.casefold():
            return known
    return COLUMN_ALIASES.get(folded, name)


def _row(cells: dict[str, str], line: int) -> UsageRow:
    date_cell = cells.get(DATE, "")
    ts = parse_export_date(date_cell)
    if ts is None:
        raise CsvFormatError(f"line {line}: {DATE} {_show(date_cell)} is not a date", line)
    if not cells.get(MODEL, "").strip():
        raise CsvFormatError(f"line {line}: the {MODEL} cell is empty", line)
    tokens = {name: _token_cell(cells.get(name, ""), name, line) for name in TOKEN_COLUMNS}
    tokens_only = TOKENS in cells and not any(name in cells for name in TOKEN_COLUMNS)
    if tokens_only:
        # Older exports give one total: counted as input tokens, priced as an estimate.
        tokens[INPUT] = _token_cell(cells[TOKENS], TOKENS, line)
    cost = cells.get(COST, "")
    billed = billed_amount(cost)
    if billed is not None and billed > MAX_ROW_COST:
        raise CsvFormatError(
            f"line {line}: {COST} {_show(cost)} is more than Cursor bills for one request "
            f"(at most $1,000,000); the file looks damaged, nothing was imported",
            line,
        )
    total_cell = cells.get(TOTAL, "")
    total = sum(tokens.values())
    if total_cell.strip():
        stated = _token_cell(total_cell, TOTAL, line, bound=len(TOKEN_COLUMNS) * MAX_ROW_TOKENS)
        if stated != total:
            raise CsvFormatError(
                f"line {line}: {TOTAL} is {stated} but the four token columns add up to {total}",
                line,
            )
    return UsageRow(
        date=date_cell,
        timestamp_ms=ts,
        cloud_agent_id=cells.get(CLOUD_AGENT_ID, ""),
        automation_id=cells.get(AUTOMATION_ID, ""),
        kind=cells.get(KIND, ""),
        model=cells.get(MODEL, ""),
        max_mode=cells.get(MAX_MODE, ""),
        cache_write=tokens[CACHE_WRITE],
        input=tokens[INPUT],
        cache_read=tokens[CACHE_READ],
        output=tokens[OUTPUT],
        total=total,
        cost=cost,
        hash=identity(ts, cells.get(MODEL, ""), [tokens[name] for name in TOKEN_COLUMNS]),
        requests=cells.get(REQUESTS, ""),
        tokens_only=tokens_only,
        line=line,
        user=cells.get(USER, "").strip(),
    )


def _token_cell(cell: str, column: str, line: int, bound: int = MAX_ROW_TOKENS) -> int:
    value = cell.strip()
    if not value:
        return 0
    if not _TOKENS.fullmatch(value) or len(value) > _MAX_TOKEN_DIGITS:
        raise CsvFormatError(f"line {line}: {column} {_show(cell)} is not a whole number", line)
    count = int(value.replace(",", ""))
    if count > bound:
        raise CsvFormatError(
            f"line {line}: {column} {_show(cell)} is more tokens than Cursor bills for one "
            f"request (at most {bound:,}); the file looks damaged, nothing was imported",
            line,
        )
    return count


def _show(cell: str) -> str:
    shown = cell if len(cell) <= 40 else cell[:37] + "..."
    return repr(shown)


def session_id(row: UsageRow, provider: str, day: date) -> str:
    """Cloud Agent ID, else Automation ID, else one session per provider per local day."""
    agent = row.cloud_agent_id.strip() or row.automation_id.strip()
    return agent or f"{KEY_PREFIX}{provider}:{day.isoformat()}"


def row_to_call(row: UsageRow, detail: EventDetail | None = None) -> Call:
    """The call an exported row stands for: $0 when not charged, billed when Cost is an amount,
    else priced at API rates; a User API Key row belongs to the `user-api-key` pseudo-provider.

    `detail` (the same event's JSON usage event) decides the class when its kind is known, and a
    usage-based event's billed cost is its `chargedCents` (Cursor's token fee included)."""
    provider, model = normalise_model(row.model)
    billing = detail.billing if detail is not None else None
    if billing is None:
        not_charged = is_not_charged(row.kind, row.cost or row.requests)
        api_key = is_user_api_key(row.kind)
        billed = None if not_charged else billed_amount(row.cost)
    else:
        not_charged = billing == "not-charged"
        api_key = billing == "user-api-key"
        billed = detail.billed_dollars if detail is not None else None
        if billing == "billed" and billed is None:
            billed = billed_amount(row.cost)  # no chargedCents: the export's Cost stays billed
    if api_key:
        provider = USER_API_KEY
    if not_charged:
        cost, priced, estimated = 0.0, True, False
    elif billed is not None:
        cost, priced, estimated = billed, True, False
    else:
        cost, priced = cost_of(model, row.input, row.output, row.cache_write, row.cache_read)
        estimated = (
            provider in (GROKBOT, USER_API_KEY) or model in UNNAMED_MODELS or row.tokens_only
        )
    return Call(
        key=KEY_PREFIX + row.hash,
        provider=provider,
        model=model,
        project=GROKBOT_IMPORTED_PROJECT if provider == GROKBOT else IMPORTED_PROJECT,
        session=session_id(row, provider, local_day(row.timestamp_ms)),
        timestamp_ms=row.timestamp_ms,
        input_tokens=row.input,
        output_tokens=row.output,
        cache_read_tokens=row.cache_read,
        cache_write_tokens=row.cache_write,
        cost=cost,
        estimated=estimated,
        billed=billed is not None,
        priced=priced,
        not_charged=not_charged,
        cursor_fee=(detail.cursor_fee or 0.0) if detail is not None and billed is not None else 0.0,
    )
