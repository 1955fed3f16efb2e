"""The reader against real SQLite files: docs/local-data.md rules with hand-computed numbers."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from codeburn.providers.calls import Call
from codeburn.providers.localtime import iso_utc, local_midnight_ms, today
from codeburn.providers.sqlite_ro import DatabaseUnrecognizedError
from tests.cursor_fixtures import NOW_MS, ago, by_key, profile, read

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


SONNET_IN = 3e-6


def only(result_calls: list[Call]) -> Call:
    assert len(result_calls) == 1, result_calls
    return result_calls[0]


def test_assistant_bubble_priced_by_its_model(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("c1", "b1", role="assistant", text="x" * 400, created_at=ago(5), model="gpt-5")
    call = only(read(p.db_path).calls)
    assert (call.input_tokens, call.output_tokens) == (0, 100)
    assert call.cost == pytest.approx(0.001)
    assert call.estimated and call.key == "cursor:bubble:bubbleId:c1:b1"
    assert call.model == "gpt-5" and call.session == "c1" and call.project == "cursor"


def test_assistant_bubble_without_model_is_cursor_auto(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("c1", "b1", role="assistant", text="x" * 400, created_at=ago(5))
    call = only(read(p.db_path).calls)
    assert call.model == "cursor-auto"
    assert call.cost == pytest.approx(0.0015)


def test_lone_user_bubble_is_estimated_from_text(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("c1", "b1", role="user", text="a" * 26, created_at=ago(5))
    call = only(read(p.db_path).calls)
    assert (call.input_tokens, call.output_tokens) == (7, 0)


def _meter_profile(tmp_path: Path, **meter: object) -> tuple[Path, int]:
    created = NOW_MS - 3_600_000
    with profile(tmp_path) as p:
        p.composer("c1", created_at_ms=created, **meter)  # type: ignore[arg-type]
        p.bubble("c1", "u", role="user", text="user prompt", created_at=ago(30))
        p.bubble(
            "c1",
            "a",
            role="assistant",
            text="assistant reply",
            created_at=ago(29),
            model="claude-4.6-sonnet",
        )
    return p.db_path, created


def test_meter_credits_input_once_per_conversation(tmp_path: Path) -> None:
    db, created = _meter_profile(tmp_path, total_used_tokens=50_000)
    calls = by_key(read(db))
    assert set(calls) == {"cursor:composer-input:c1", "cursor:bubble:bubbleId:c1:a"}
    meter = calls["cursor:composer-input:c1"]
    assert (meter.input_tokens, meter.output_tokens) == (50_000, 0)
    assert meter.cost == pytest.approx(0.15)
    assert meter.timestamp_ms == created
    assert meter.model == "claude-4.6-sonnet"
    assert calls["cursor:bubble:bubbleId:c1:a"].output_tokens == 4


@pytest.mark.parametrize("total", [0, None])
def test_meter_falls_back_to_context_tokens(tmp_path: Path, total: int | None) -> None:
    db, _ = _meter_profile(tmp_path, total_used_tokens=total, context_tokens_used=42_000)
    assert by_key(read(db))["cursor:composer-input:c1"].input_tokens == 42_000


def test_bubble_token_counts_win_over_meter(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.composer("c1", created_at_ms=NOW_MS - 3_600_000, total_used_tokens=80_000)
        p.bubble("c1", "u", role="user", text="hi", created_at=ago(30), input_tokens=6000)
        p.bubble("c1", "a", role="assistant", text="ok", created_at=ago(29), output_tokens=900)
    calls = read(p.db_path).calls
    assert sum(c.input_tokens for c in calls) == 6000
    assert sum(c.output_tokens for c in calls) == 900


def _stream_profile(tmp_path: Path, prompt: str, tool_text: str | None) -> Path:
    with profile(tmp_path) as p:
        p.bubble("c1", "u", role="user", text="", created_at=ago(30), request_id="R")
        p.bubble("c1", "a", role="assistant", text="done", created_at=ago(29))
        p.agent("a1", role="user", content=prompt, request_id="R")
        if tool_text is not None:
            p.agent("a2", role="tool", content=[{"type": "text", "text": tool_text}])
    return p.db_path


def test_stream_credits_user_characters(tmp_path: Path) -> None:
    calls = by_key(read(_stream_profile(tmp_path, "p" * 72, None)))
    assert calls["cursor:composer-input:c1"].input_tokens == 18
    assert calls["cursor:bubble:bubbleId:c1:a"].output_tokens == 1


def test_stream_adds_tool_context(tmp_path: Path) -> None:
    calls = by_key(read(_stream_profile(tmp_path, "p" * 18, "t" * 4000)))
    assert calls["cursor:composer-input:c1"].input_tokens == 1005


def test_agent_stream_only_request(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.agent("a1", role="user", content="u" * 27, request_id="req-9", model="gpt-5")
        p.agent("a2", role="assistant", content=[{"type": "text", "text": "v" * 32}])
    mtime_ms = NOW_MS - 60_000  # the database last written a minute ago
    for path in (p.db_path, p.db_path.with_name(p.db_path.name + "-wal")):
        if path.exists():
            os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    call = only(read(p.db_path).calls)
    assert call.key == "cursor:agentKv:req-9"
    assert (call.input_tokens, call.output_tokens) == (7, 8)
    assert call.timestamp_ms == mtime_ms
    assert call.project == "cursor" and call.session == "req-9" and call.model == "gpt-5"


@pytest.mark.clock
def test_stream_only_date_is_kept_from_first_sight(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.agent("a1", role="user", content="hello", request_id="req-1")
    first = read(p.db_path)
    os.utime(p.db_path, ns=(NOW_MS * 1_000_000 + 10**9, NOW_MS * 1_000_000 + 10**9))
    again = read(p.db_path, first_seen=first.first_seen)
    assert only(again.calls).timestamp_ms == only(first.calls).timestamp_ms


@pytest.mark.clock
def test_request_on_an_old_bubble_is_not_stream_only(tmp_path: Path) -> None:
    old = iso_utc(NOW_MS - 220 * 86_400_000)
    with profile(tmp_path) as p:
        p.bubble("c-old", "u", role="user", text="old", created_at=old, request_id="R-old")
        p.agent("a1", role="user", content="x" * 40, request_id="R-old")
    assert read(p.db_path).calls == []


def test_shell_tool_call_is_bash_with_command_names(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("c1", "u", role="user", text="run tests", created_at=ago(10), request_id="R")
        p.bubble("c1", "a", role="assistant", text="ran", created_at=ago(9))
        p.agent("a1", role="user", content="run tests", request_id="R")
        call = {"type": "tool-call", "toolName": "Shell", "args": {"command": "npm test"}}
        p.agent("a2", role="assistant", content=[{"type": "text", "text": "ok"}, call])
    record = by_key(read(p.db_path))["cursor:composer-input:c1"]
    assert record.tools == ("Bash",)
    assert record.commands == ("npm",)


def test_code_blocks_make_an_edit_with_languages(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble(
            "c1",
            "a",
            role="assistant",
            text="code",
            created_at=ago(9),
            languages=["python", "plaintext", "python", "rust"],
        )
    assert only(read(p.db_path).calls).tools == ("cursor:edit", "lang:python", "lang:rust")


def test_bubble_rewritten_in_place_counts_once(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("c1", "a", role="assistant", text="x" * 40, created_at=ago(9))
        p.flush()
        p.bubble("c1", "a", role="assistant", text="x" * 40, created_at=ago(9), output_tokens=77)
    call = only(read(p.db_path).calls)
    assert call.output_tokens == 77


@pytest.mark.clock
def test_budget_keeps_newest_and_warns(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        for i in range(4):
            p.bubble("c1", f"b{i}", role="assistant", text="x" * 8, created_at=ago(40 - i))
    result = read(p.db_path, budget=2)
    assert sorted(c.key for c in result.calls) == [
        "cursor:bubble:bubbleId:c1:b2",
        "cursor:bubble:bubbleId:c1:b3",
    ]
    assert result.budget_hit and len(result.warnings) == 1


@pytest.mark.clock
def test_budget_not_hit_by_rows_outside_the_window(tmp_path: Path) -> None:
    old = iso_utc(NOW_MS - 220 * 86_400_000)
    with profile(tmp_path) as p:
        p.bubble("c0", "o1", role="assistant", text="x" * 8, created_at=old)
        p.bubble("c0", "o2", role="assistant", text="x" * 8, created_at=old)
        p.bubble("c1", "b1", role="assistant", text="x" * 8, created_at=ago(3))
        p.bubble("c1", "b2", role="assistant", text="x" * 8, created_at=ago(2))
    result = read(p.db_path, budget=2)
    assert len(result.calls) == 2 and result.warnings == [] and not result.budget_hit


def test_subcomposer_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.bubble("task-call_x\nfc_y", "b1", role="assistant", text="x" * 8, created_at=ago(3))
        p.bubble("c1", "b1", role="assistant", text="x" * 8, created_at=ago(2))
    result = read(p.db_path)
    assert len(result.calls) == 1 and result.skipped_subcomposer == 1


@pytest.mark.clock
def test_undated_and_too_old_bubbles_are_excluded(tmp_path: Path) -> None:
    seven_months = iso_utc(local_midnight_ms(today() - timedelta(days=213)))
    with profile(tmp_path) as p:
        p.bubble("c1", "n", role="assistant", text="x" * 8, created_at=NOW_MS)
        p.bubble("c1", "m", role="assistant", text="x" * 8)
        p.bubble("c2", "o", role="assistant", text="x" * 8, created_at=seven_months)
        p.bubble("c3", "k", role="assistant", text="x" * 8, created_at=ago(1))
    result = read(p.db_path)
    assert [c.key for c in result.calls] == ["cursor:bubble:bubbleId:c3:k"]
    assert result.skipped_undated == 2


def test_projects_from_workspace_storage(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        for composer in ("a1", "a2", "w1", "h1", "m1", "x1"):
            p.bubble(composer, "b", role="assistant", text="x" * 8, created_at=ago(3))
        p.workspace("h1", folder="file:///Users/me/work-app", composers=["a1", "a2"])
        p.workspace("h2", folder="vscode-remote://wsl+Ubuntu/home/me/proj", composers=["w1"])
        p.workspace("h3", folder="file:///home/me/headers%20only", headers=["h1"])
        p.workspace("h4", multi_root=True, composers=["m1"])
    projects = {c.session: c.project for c in read(p.db_path).calls}
    assert projects == {
        "a1": "-Users-me-work-app",
        "a2": "-Users-me-work-app",
        "w1": "-wsl-Ubuntu-home-me-proj",
        "h1": "-home-me-headers only",
        "m1": "cursor",
        "x1": "cursor",
    }


def test_binary_agent_value_and_blob_json_do_not_break_the_parse(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        p.put("agentKv:blob:bin", b"\x00\x01\x02binary")
        p.put("agentKv:blob:brace", b"{not json at all")
        p.put(
            "agentKv:blob:blobjson",
            json.dumps(
                {
                    "role": "user",
                    "content": "q" * 8,
                    "providerOptions": {"cursor": {"requestId": "R2"}},
                }
            ).encode(),
        )
        p.put("bubbleId:c1:bin", b"\xff\xfe not json")
        value = p.bubble_value(role="assistant", text="x" * 12, created_at=ago(2))
        p.put("bubbleId:c1:blob", json.dumps(value).encode())
    calls = by_key(read(p.db_path))
    assert calls["cursor:bubble:bubbleId:c1:blob"].output_tokens == 3
    assert calls["cursor:agentKv:R2"].input_tokens == 2


def test_invalid_utf8_counts_replacement_characters(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        value = p.bubble_value(role="assistant", text="MARK", created_at=ago(2))
        raw = json.dumps(value).encode().replace(b"MARK", b"abcd" + b"\x80" * 8)
        p.put("bubbleId:c1:b", raw)
    # 4 letters + 8 replacement characters = 12 chars (SQLite alone would count 4).
    assert only(read(p.db_path).calls).output_tokens == 3


def test_database_without_cursor_table_is_unrecognized(tmp_path: Path) -> None:
    db = tmp_path / "state.vscdb"
    sqlite3.connect(db).execute("CREATE TABLE other(x)").connection.close()
    with pytest.raises(DatabaseUnrecognizedError, match="not recognized"):
        read(db)


@pytest.mark.parametrize("meter", [10_000_001, 2**53 - 1, 10**30])
def test_a_meter_above_10m_tokens_is_skipped_and_counted(tmp_path: Path, meter: int) -> None:
    """A meter of 2^53 - 1 was priced as $11.26 B (issue 20, item 5): the next source applies."""
    db, _ = _meter_profile(tmp_path, total_used_tokens=meter)
    result = read(db)
    calls = by_key(result)
    assert "cursor:composer-input:c1" not in calls
    assert calls["cursor:bubble:bubbleId:c1:u"].input_tokens == 3  # "user prompt": text ÷ 4
    assert result.skipped_gauges == 1


def test_a_meter_at_10m_tokens_is_a_gauge(tmp_path: Path) -> None:
    db, _ = _meter_profile(tmp_path, total_used_tokens=10_000_000)
    result = read(db)
    assert by_key(result)["cursor:composer-input:c1"].input_tokens == 10_000_000
    assert result.skipped_gauges == 0


def test_a_context_meter_stands_in_for_a_total_above_the_bound(tmp_path: Path) -> None:
    db, _ = _meter_profile(tmp_path, total_used_tokens=2**53 - 1, context_tokens_used=42_000)
    result = read(db)
    assert by_key(result)["cursor:composer-input:c1"].input_tokens == 42_000
    assert result.skipped_gauges == 1
