"""The Cursor usage export parser: header variants, row checks, hashes, models, costs, fuzzing."""

from __future__ import annotations

import hashlib
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeburn.providers.calls import GROKBOT_IMPORTED_PROJECT, IMPORTED_PROJECT
from codeburn.providers.exports.usage_csv import (
    CsvFormatError,
    UsageRow,
    billed_amount,
    normalise_model,
    parse_csv,
    parse_export_date,
    row_to_call,
)
from codeburn.providers.localtime import local_midnight_ms
from tests.csv_fixtures import (
    CURRENT_COLUMNS,
    REAL_LAYOUTS,
    USER_EMAIL,
    VARIANTS,
    ExportRow,
    export_bytes,
    export_text,
    spec_rows,
)

HEADER = ",".join(CURRENT_COLUMNS)
ROW = ExportRow(
    "2026-08-27T10:00:00.000Z", "auto", cache_write=10, input=100, cache_read=5000, output=50
)


def _csv(*lines: str) -> bytes:
    return ("\r\n".join(lines) + "\r\n").encode()


def test_current_export_maps_tokens_and_keeps_cells() -> None:
    data = _csv(
        HEADER,
        "2026-08-27T10:00:00.000Z,bc-1,auto-9,On-Demand,claude-opus-5-thinking-high,Yes,"
        "7,200,8000,90,8297,$1.25",
    )
    [row] = parse_csv(data)
    assert row.timestamp_ms == 1787824800000
    assert (row.cache_write, row.input, row.cache_read, row.output) == (7, 200, 8000, 90)
    assert row.total == row.tokens == 8297
    assert (row.cloud_agent_id, row.automation_id, row.kind, row.max_mode) == (
        "bc-1",
        "auto-9",
        "On-Demand",
        "Yes",
    )
    assert row.cost == "$1.25"
    assert row.line == 2


def test_identity_is_sha256_of_time_model_and_tokens_joined_with_unit_separator() -> None:
    [row] = parse_csv(export_bytes([ROW]))
    # 2026-08-27T10:00:00.000Z in epoch ms, Model, then cache write, input, cache read, output.
    cells = ["1787824800000", "auto", "10", "100", "5000", "50"]
    expected = hashlib.sha256("\x1f".join(cells).encode()).hexdigest()[:32]
    assert row.hash == expected
    assert len(row.hash) == 32


def test_identity_ignores_cells_cursor_re_renders_between_exports() -> None:
    first = ExportRow(
        ROW.date, "auto", 10, 100, 5000, 50, cost="Included", kind="Errored, Not Charged"
    )
    again = ExportRow(
        "2026-08-27T10:00:00Z", "auto", 10, 100, 5000, 50, cost="0.19", kind="Errored, No Charge"
    )
    [a] = parse_csv(export_bytes([first]))
    [b] = parse_csv(export_bytes([again]))
    assert a.hash == b.hash
    assert (a.cost, b.cost) == ("Included", "0.19")


def test_identical_rows_of_one_file_stay_distinct_events() -> None:
    rows = parse_csv(export_bytes([ROW, ROW]))
    assert len({r.hash for r in rows}) == 2
    assert rows[0].hash == parse_csv(export_bytes([ROW]))[0].hash


def test_team_export_drops_user_and_hashes_like_personal() -> None:
    personal = parse_csv(export_bytes([ROW], "current"))
    team_data = export_bytes([ROW], "team")
    assert USER_EMAIL.encode() in team_data
    team = parse_csv(team_data)
    assert [r.hash for r in team] == [r.hash for r in personal]
    assert USER_EMAIL not in repr(team)


def test_older_exports_read_missing_columns_as_empty() -> None:
    plain = ExportRow(ROW.date, "auto", input=100, output=50, kind="", max_mode="")
    current = parse_csv(export_bytes([plain], "current"))
    no_agent = parse_csv(export_bytes([plain], "no-agent"))
    oldest = parse_csv(export_bytes([plain], "oldest"))
    assert current[0].hash == no_agent[0].hash == oldest[0].hash
    assert (oldest[0].kind, oldest[0].max_mode, oldest[0].cloud_agent_id) == ("", "", "")
    assert oldest[0].tokens == 150


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("bom", [True, False])
@pytest.mark.parametrize("crlf", [True, False])
@pytest.mark.parametrize("quote_all", [True, False])
def test_every_variant_and_encoding_detail_parses_the_same(
    variant: str, bom: bool, crlf: bool, quote_all: bool
) -> None:
    rows = parse_csv(export_bytes([ROW], variant, bom=bom, crlf=crlf, quote_all=quote_all))
    assert [(r.model, r.tokens, r.timestamp_ms) for r in rows] == [("auto", 5160, 1787824800000)]


def test_quoted_fields_with_commas_doubled_quotes_and_newlines() -> None:
    odd = ExportRow(
        ROW.date,
        'model "x", v2',
        input=5,
        kind="Errored, No Charge",
        cloud_agent_id='bc-"7"',
    )
    multi = ExportRow(ROW.date, "gpt-5", input=1, kind="line one\nline two")
    data = export_bytes([odd, multi], quote_all=False)
    assert b'"Errored, No Charge"' in data and b'"model ""x"", v2"' in data
    first, second = parse_csv(data)
    assert first.model == 'model "x", v2'
    assert first.kind == "Errored, No Charge"
    assert first.cloud_agent_id == 'bc-"7"'
    assert second.kind == "line one\nline two"
    assert (first.line, second.line) == (2, 3)


def test_line_numbers_count_physical_lines_after_a_multiline_cell() -> None:
    multi = ExportRow(ROW.date, "gpt-5", kind="a\nb\nc")
    broken = ExportRow(ROW.date, "gpt-5", input=1, total=2)
    data = export_bytes([multi, broken], crlf=False)
    with pytest.raises(CsvFormatError) as err:
        parse_csv(data)
    assert err.value.line == 5
    assert "line 5" in str(err.value)


def test_blank_lines_are_skipped_and_empty_token_cells_are_zero() -> None:
    data = _csv(HEADER, "", "2026-08-27T10:00:00.000Z,,,Free,composer-2.5-fast,No,,,,,,Free", "")
    [row] = parse_csv(data)
    assert row.tokens == 0 and row.total == 0
    assert row.line == 3


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "empty"),
        (b"\r\n\r\n", "empty"),
        (b"name,email\nann,a@example.com\n", "Date"),
        (_csv(HEADER.replace("Model", "Modell"), ROW.date), "Model"),
        (_csv(HEADER.replace("Cache Read", "Reads")), "Cache Read"),
        (b"\xff\xfe\x00D\x00a", "UTF-8"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "not a Cursor usage export"),
    ],
)
def test_files_that_are_not_exports_are_refused(data: bytes, needle: str) -> None:
    with pytest.raises(CsvFormatError) as err:
        parse_csv(data)
    assert needle in str(err.value)
    assert "Export CSV" in str(err.value) or "twice" in str(err.value)


def test_header_only_file_has_no_rows() -> None:
    assert parse_csv(_csv(HEADER)) == []


def test_header_names_are_matched_by_name_not_position() -> None:
    shuffled = (
        "Cost,Model,Output Tokens,Date,Cache Read,Input (w/o Cache Write),Input (w/ Cache Write)"
    )
    [row] = parse_csv(_csv(shuffled, "$0.50,gpt-5,3,2026-08-27T10:00:00Z,2,1,4"))
    assert (row.model, row.output, row.cache_read, row.input, row.cache_write) == (
        "gpt-5",
        3,
        2,
        1,
        4,
    )
    assert row.cost == "$0.50" and row.total == 10


GOOD = "2026-08-27T10:00:00.000Z,,,Included,auto,No,1,2,3,4,10,Included"


@pytest.mark.parametrize(
    ("bad_row", "needle"),
    [
        ("yesterday,,,Included,auto,No,1,2,3,4,10,Included", "Date"),
        ("2026-13-27T10:00:00Z,,,Included,auto,No,1,2,3,4,10,Included", "Date"),
        (",,,Included,auto,No,1,2,3,4,10,Included", "Date"),
        ("2026-08-27T10:00:00Z,,,Included,,No,1,2,3,4,10,Included", "Model"),
        ("2026-08-27T10:00:00Z,,,Included,  ,No,1,2,3,4,10,Included", "Model"),
        ("2026-08-27T10:00:00Z,,,Included,auto,No,1,2a,3,4,10,Included", "Input (w/o Cache Write)"),
        ("2026-08-27T10:00:00Z,,,Included,auto,No,1,2,3.5,4,10,Included", "Cache Read"),
        ("2026-08-27T10:00:00Z,,,Included,auto,No,-1,2,3,4,8,Included", "Input (w/ Cache Write)"),
        ("2026-08-27T10:00:00Z,,,Included,auto,No,1,2,3,4,x,Included", "Total Tokens"),
        ("2026-08-27T10:00:00Z,,,Included,auto,No,1,2,3,4,11,Included", "add up to 10"),
        ("2026-08-27T10:00:00Z,,,Included,auto,No,1,2,3,4,10", "cells"),
        ("2026-08-27T10:00:00Z,,,Included,auto,No,1,2,3,4,10,Included,extra", "cells"),
    ],
)
def test_a_broken_row_anywhere_refuses_the_file_naming_its_line(bad_row: str, needle: str) -> None:
    data = _csv(HEADER, GOOD, GOOD, bad_row, GOOD)
    with pytest.raises(CsvFormatError) as err:
        parse_csv(data)
    assert err.value.line == 4
    assert str(err.value).startswith("line 4:")
    assert needle in str(err.value)


@pytest.mark.parametrize(
    ("cell", "iso_ms"),
    [
        ("2025-12-02T01:46:34.592Z", 1764639994592),
        ('"2025-12-02T01:46:34.592Z"', 1764639994592),
        ("2025-12-02T01:46:34Z", 1764639994000),
        ("2025-12-02T01:46:34.592+00:00", 1764639994592),
        ("2025-12-02T02:46:34.592+01:00", 1764639994592),
        ("2025-12-02 01:46:34.592Z", 1764639994592),
        ("2025-12-02T01:46:34.592", 1764639994592),
        ("2025-12-02T01:46:34.592123456Z", 1764639994592),
        (" 2025-12-02t01:46:34.592z ", 1764639994592),
        ("1764639994592", 1764639994592),
    ],
)
def test_plausible_date_forms(cell: str, iso_ms: int) -> None:
    assert parse_export_date(cell) == iso_ms


def test_date_only_cell_is_local_midnight() -> None:
    assert parse_export_date("2025-12-02") == local_midnight_ms(date(2025, 12, 2))


@pytest.mark.parametrize(
    "cell",
    ["", "yesterday", "2025-12-32", "2025-12-02T25:00:00Z", "1999-12-31T00:00:00Z", "12345", "Z"],
)
def test_implausible_dates_are_refused(cell: str) -> None:
    assert parse_export_date(cell) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("auto", ("cursor", "cursor-auto")),
        ("default", ("cursor", "cursor-auto")),
        ("Auto", ("cursor", "cursor-auto")),
        ("cursor-grok-4.6-high", ("cursor", "grok-4.6-high")),
        ("grok-bot-automation", ("grokbot", "grok-bot-automation")),
        ("grok-code-fast-1", ("cursor", "grok-code-fast-1")),
        ("claude-opus-5-thinking-high", ("cursor", "claude-opus-5-thinking-high")),
    ],
)
def test_model_normalisation(raw: str, expected: tuple[str, str]) -> None:
    assert normalise_model(raw) == expected


@pytest.mark.parametrize(
    ("cost", "amount"),
    [
        ("$1.25", 1.25),
        ("0.11", 0.11),
        ("$0.00", 0.0),
        (" $3 ", 3.0),
        ("Included", None),
        ("Free", None),
        ("-", None),
        ("", None),
        ("$", None),
        ("$1,234.50", 1234.5),  # thousands separators (issue 20, item 13)
        ("1,234", 1234.0),
        ("$1,000,000.00", 1_000_000.0),
        ("$1,23", None),
        ("$1234,5", None),
    ],
)
def test_billed_amount(cost: str, amount: float | None) -> None:
    assert billed_amount(cost) == amount


def test_spec_rows_become_calls_billed_or_estimated_per_cost_rule() -> None:
    day1 = date(2026, 8, 27)
    calls = [row_to_call(r) for r in parse_csv(export_bytes(spec_rows(day1)))]
    auto, opus, grok, bot, composer = calls
    assert (auto.model, auto.estimated, auto.billed) == ("cursor-auto", True, False)
    assert auto.cost == pytest.approx((100 * 3 + 50 * 15 + 10 * 3.75 + 5000 * 0.3) / 1e6)
    assert (opus.cost, opus.billed, opus.estimated, opus.priced) == (1.25, True, False, True)
    assert (grok.provider, grok.model, grok.estimated) == ("cursor", "grok-4.6-high", False)
    assert grok.cost == pytest.approx((300 * 2 + 20 * 6 + 1000 * 0.5) / 1e6)
    assert (bot.provider, bot.project, bot.estimated) == ("grokbot", GROKBOT_IMPORTED_PROJECT, True)
    assert bot.cost == pytest.approx((40 * 2 + 7 * 6 + 70000 * 0.5) / 1e6)
    assert (composer.tokens, composer.estimated, composer.billed) == (0, False, False)
    assert {c.project for c in (auto, opus, grok, composer)} == {IMPORTED_PROJECT}
    assert all(c.key.startswith("cursor-import:") and len(c.key) == 14 + 32 for c in calls)
    assert auto.session == opus.session == "cursor-import:cursor:2026-08-27"
    assert bot.session == "cursor-import:grokbot:2026-08-29"
    assert composer.session == "cursor-import:cursor:2026-08-29"


def test_session_prefers_cloud_agent_then_automation() -> None:
    rows = [
        ExportRow(ROW.date, "gpt-5", cloud_agent_id="bc-1", automation_id="au-1"),
        ExportRow(ROW.date, "gpt-5", automation_id="au-1"),
    ]
    sessions = [row_to_call(r).session for r in parse_csv(export_bytes(rows))]
    assert sessions == ["bc-1", "au-1"]


def test_unknown_model_with_included_cost_is_unpriced_not_dropped() -> None:
    [row] = parse_csv(export_bytes([ExportRow(ROW.date, "mystery-model-9", input=10)]))
    call = row_to_call(row)
    assert (call.priced, call.cost, call.tokens) == (False, 0.0, 10)


# --- fuzzing -------------------------------------------------------------------------------------

_CELLS = st.one_of(
    st.sampled_from(
        ["", "0", "12", "auto", "$1.25", "Included", '"', ",", "\r", "\n", "\ufeff", "\x00"]
    ),
    st.sampled_from(["2026-08-27T10:00:00.000Z", "2026-08-27", "9999-99-99", "1787824800000"]),
    st.text(max_size=12),
    st.integers(min_value=-5, max_value=10**20).map(str),
)


@st.composite
def _near_valid(draw: st.DrawFn) -> bytes:
    columns = list(draw(st.sampled_from([*VARIANTS.values(), *REAL_LAYOUTS.values()])))
    if draw(st.booleans()):
        columns = draw(st.permutations(columns))
    if draw(st.booleans()) and columns:
        del columns[draw(st.integers(0, len(columns) - 1))]
    lines = [",".join(columns)]
    for _ in range(draw(st.integers(0, 4))):
        width = len(columns) + draw(st.integers(-1, 1))
        cells = [draw(_CELLS) for _ in range(max(width, 0))]
        quoted = draw(st.booleans())
        lines.append(",".join(f'"{c}"' if quoted else c for c in cells))
    text = draw(st.sampled_from(["\r\n", "\n", "\r"])).join(lines)
    return (draw(st.sampled_from(["", "\ufeff"])) + text).encode("utf-8", "surrogatepass")


def _parse_or_refuse(data: bytes) -> None:
    try:
        rows = parse_csv(data)
    except CsvFormatError as exc:
        assert str(exc)
        return
    for row in rows:
        assert row.total == row.tokens
        assert len(row.hash) == 32
        row_to_call(row)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_arbitrary_bytes_only_ever_raise_csv_format_error(data: bytes) -> None:
    _parse_or_refuse(data)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_near_valid())
def test_fuzz_near_valid_exports_only_ever_raise_csv_format_error(data: bytes) -> None:
    _parse_or_refuse(data)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.builds(
            ExportRow,
            date=st.just(ROW.date),
            model=st.text(min_size=1, max_size=10).filter(lambda s: s.strip() != ""),
            input=st.integers(0, 10**9),
            output=st.integers(0, 10**9),
            kind=st.text(max_size=8),
        ),
        max_size=5,
    ),
    st.sampled_from(sorted(VARIANTS)),
)
def test_fuzz_valid_rows_round_trip(rows: list[ExportRow], variant: str) -> None:
    text = export_text(rows, variant)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return
    parsed = parse_csv(data)
    assert [(r.input, r.output) for r in parsed] == [(r.input, r.output) for r in rows]


# --- header variants of real exports ------------------------------------------------------------


def _parse_text(text: str) -> list[UsageRow]:
    return parse_csv(text.encode("utf-8"))


def test_requests_column_keeps_the_count_and_prices_at_api_rates() -> None:
    [row] = _parse_text(
        "Date,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,"
        "Output Tokens,Total Tokens,Requests\n"
        '"2026-05-13T09:33:42.386Z","Included","gpt-5","No","0","1000000","0","100000",'
        '"1100000","4"\n'
    )
    assert (row.requests, row.cost) == ("4", "")
    call = row_to_call(row)
    # gpt-5: 1.25 $/M input, 10 $/M output.
    assert call.cost == pytest.approx(1.25 + 1.0)
    assert (call.billed, call.estimated, call.not_charged) == (False, False, False)


def test_older_layouts_output_cost_dollars_and_thousands_separators() -> None:
    [row] = _parse_text(
        "Date,User,Kind,Model,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Output,"
        "Total Tokens,Cost ($)\n"
        '"2025-08-21T15:33:46.948Z","You","Included in Pro","gpt-5","1,514","0","23,246",'
        '"1,142","25,902","$0.25"\n'
    )
    assert (row.cache_write, row.cache_read, row.output, row.total) == (1514, 23246, 1142, 25902)
    call = row_to_call(row)
    assert (call.cost, call.billed) == (0.25, True)


def test_a_single_tokens_column_counts_as_input_and_is_an_estimate() -> None:
    [row] = _parse_text(
        "Date,User,Kind,Max Mode,Model,Tokens,Cost\n"
        '"2025-07-06T23:49:00.000Z","You","Included","No","gpt-5","50,512","Included"\n'
    )
    assert (row.tokens_only, row.input, row.tokens) == (True, 50512, 50512)
    call = row_to_call(row)
    assert call.cost == pytest.approx(50512 * 1.25e-6)
    assert call.estimated and not call.billed


def test_a_file_with_none_of_the_token_layouts_names_the_missing_column() -> None:
    with pytest.raises(CsvFormatError, match="no Output Tokens column"):
        _parse_text(
            "Date,Model,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Cost\n"
            "2026-01-01T00:00:00Z,gpt-5,1,2,3,Included\n"
        )


@pytest.mark.parametrize(
    ("kind", "cost", "free"),
    [
        ("Errored, Not Charged", "Included", True),
        ("Errored, No Charge", "0.19", True),
        ("Aborted, Not Charged", "", True),
        ("Errored", "-", True),
        ("Errored", "0.05", False),
        ("Included", "-", False),
        ("On-Demand", "$0.11", False),
    ],
)
def test_rows_cursor_did_not_charge_cost_nothing_but_count(
    kind: str, cost: str, free: bool
) -> None:
    row = ExportRow("2026-04-09T07:39:09.091Z", "composer-2", input=1000, kind=kind, cost=cost)
    call = row_to_call(parse_csv(export_bytes([row]))[0])
    assert call.not_charged is free
    if free:
        assert (call.cost, call.billed, call.estimated, call.priced) == (0.0, False, False, True)
    else:
        assert call.cost > 0


def test_user_api_key_rows_belong_apart_from_cursor_spend() -> None:
    row = ExportRow("2026-02-19T13:00:40.253Z", "us.anthropic.claude-opus-4-6-v1", input=1000,
                    output=1000, kind="User API Key", cost="")  # fmt: skip
    call = row_to_call(parse_csv(export_bytes([row]))[0])
    assert call.provider == "user-api-key"
    assert call.cost == pytest.approx(1000 * 5e-6 + 1000 * 25e-6)  # claude-opus-4-6 list price
    assert call.estimated and not call.billed


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.builds(
            ExportRow,
            date=st.just(ROW.date),
            model=st.sampled_from(["auto", "gpt-5", "claude-4.5-sonnet-thinking"]),
            cache_write=st.integers(0, 10**7),
            input=st.integers(0, 10**9),
            cache_read=st.integers(0, 10**9),
            output=st.integers(0, 10**9),
            cost=st.sampled_from(["Included", "$0.25", "0.19", "-"]),
        ),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from(sorted(REAL_LAYOUTS)),
)
def test_fuzz_real_layouts_read_the_same_tokens(rows: list[ExportRow], layout: str) -> None:
    parsed = parse_csv(export_bytes(rows, layout))
    assert [r.tokens for r in parsed] == [r.tokens for r in rows]
    if layout == "usage-details":
        assert all(r.tokens_only and r.input == r.tokens for r in parsed)
    else:
        assert [(r.cache_write, r.input, r.cache_read, r.output) for r in parsed] == [
            (r.cache_write, r.input, r.cache_read, r.output) for r in rows
        ]
    if layout == "requests":
        assert all((r.requests, r.cost) == ("1", "") for r in parsed)


def test_a_cost_with_thousands_separators_is_read_as_billed() -> None:
    """`$1,234.50` was re-priced from tokens and shown as exact (issue 20, item 13)."""
    [row] = parse_csv(
        _csv(HEADER, '2026-08-27T10:00:00.000Z,,,On-Demand,gpt-5,No,0,100,0,10,110,"$1,234.50"')
    )
    call = row_to_call(row)
    assert (call.cost, call.billed, call.estimated) == (1234.5, True, False)


@pytest.mark.parametrize(
    ("cells", "needle"),
    [
        ("0,1000000000001,0,0,1000000000001,$1.00", "Input (w/o Cache Write) '1000000000001'"),
        ("1000000000001,0,0,0,1000000000001,$1.00", "Input (w/ Cache Write)"),
        ('0,0,"1,000,000,000,001",0,1000000000001,$1.00', "Cache Read"),
        ("0,0,0,9999999999999,9999999999999,$1.00", "Output Tokens"),
        ('0,1,0,1,2,"$1,000,000.01"', "Cost '$1,000,000.01'"),
        ("0,1,0,1,2,10000000000000000000000000000", "Cost"),  # 28 digits
        ("0,1,0,1,2," + "1" * 400, "Cost"),  # float: inf
    ],
)
def test_rows_beyond_what_cursor_bills_refuse_the_file(cells: str, needle: str) -> None:
    """A token cell above 10^12 or a cost above $1,000,000 is garbage (issue 20, item 5)."""
    bad = f"2026-08-27T10:00:00.000Z,,,On-Demand,gpt-5,No,{cells}"
    with pytest.raises(CsvFormatError) as err:
        parse_csv(_csv(HEADER, GOOD, GOOD, bad, GOOD))
    assert err.value.line == 4 and str(err.value).startswith("line 4:")
    assert needle in str(err.value) and "nothing was imported" in str(err.value)


def test_rows_at_the_bounds_are_read() -> None:
    top = 10**12
    line = f"2026-08-27T10:00:00.000Z,,,On-Demand,gpt-5,No,{top},{top},{top},{top},{4 * top},"
    [row] = parse_csv(_csv(HEADER, line + '"$1,000,000"'))
    assert (row.tokens, row_to_call(row).cost) == (4 * top, 1_000_000.0)
    [old] = _parse_text(f"Date,Model,Tokens,Cost\n2026-08-27T10:00:00.000Z,gpt-5,{top},$1\n")
    assert old.input == top
    with pytest.raises(CsvFormatError, match="Tokens"):
        _parse_text(f"Date,Model,Tokens,Cost\n2026-08-27T10:00:00.000Z,gpt-5,{top + 1},$1\n")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_quoted_last_cell_left_open_refuses_the_file_naming_its_line(newline: str) -> None:
    """A cut export: `"0.08"` cut to `"0.` was stored as $0 (issue 20, item 19)."""
    good = '"2026-08-27T10:00:00.000Z","","","On-Demand","gpt-5","No","0","1","0","1","2","0.08"'
    text = newline.join([HEADER, good, good, good[:-3]])
    with pytest.raises(CsvFormatError) as err:
        _parse_text(text)
    assert err.value.line == 4 and "not closed" in str(err.value)
    # A quoted cell holding a newline, cut before its closing quote: the line it starts on.
    multi = good[:-6] + '"line one' + newline + "line two"
    with pytest.raises(CsvFormatError) as err:
        _parse_text(newline.join([HEADER, good, multi]))
    assert err.value.line == 3


@pytest.mark.parametrize(
    "last",
    [
        '"2026-08-27T10:00:00.000Z","","","On-Demand","gpt-5","No","0","1","0","1","2","0.08"',
        '"2026-08-27T10:00:00.000Z","","","On-Demand","gpt-5","No","0","1","0","1","2","a""b"""',
        '"2026-08-27T10:00:00.000Z","","","On-Demand","gpt-5","No","0","1","0","1","2",""',
        "2026-08-27T10:00:00.000Z,,,On-Demand,gpt-5,No,0,1,0,1,2,0.0",  # unquoted: cannot tell
        '2026-08-27T10:00:00.000Z,,,On-Demand,gpt-5,No,0,1,0,1,2,a"b',  # a quote inside a cell
        '2026-08-27T10:00:00.000Z,,,On-Demand,gpt-5,No,0,1,0,1,2,"0.0"x',
    ],
)
def test_a_closed_or_unquoted_last_cell_is_read(last: str) -> None:
    for end in ("", "\n", "\r\n"):
        rows = _parse_text(HEADER + "\n" + last + end)
        assert len(rows) == 1
