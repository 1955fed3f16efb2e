"""Agent transcripts: where they are found, and their turns (real files in tmp_path)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from codeburn.providers.agent.graph import GraphTurn
from codeburn.providers.home.transcripts import find_transcripts, parse_jsonl, parse_txt
from codeburn.providers.samples.home_writer import (
    AgentHomeWriter,
    assistant,
    shell,
    tool_result,
    turn_ended,
    user,
)

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def turn(user_chars: int, context: int, answer: int, tools=(), commands=()) -> GraphTurn:
    return GraphTurn(None, user_chars, context, answer, None, tuple(tools), tuple(commands))


def jsonl(*records: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_jsonl_turns_count_user_context_and_assistant_characters() -> None:
    data = jsonl(
        user("q" * 40),
        assistant("r" * 200, thinking="t" * 20, tools=[shell("cd x && npm test")]),
        tool_result("o" * 80),
        assistant("s" * 40),
        turn_ended(),
        turn_ended(),  # nothing open: no empty turn
        user("w" * 8),
        assistant("z" * 4),  # the file ends without turn_ended
    )
    data += b"not json\n[1, 2]\n"
    assert parse_jsonl(data) == (
        turn(40, 80, 260, ["Bash"], ["cd", "npm"]),
        turn(8, 0, 4),
    )


def test_a_new_question_opens_a_turn_even_without_turn_ended() -> None:
    data = jsonl(
        user("a" * 4),
        user("b" * 6),  # consecutive user messages belong to one turn
        assistant("c" * 10),
        user("d" * 3),
        assistant("e" * 5),
        {"role": "user", "message": {"content": "plain string content"}},
    )
    assert parse_jsonl(data) == (turn(10, 0, 10), turn(3, 0, 5), turn(20, 0, 0))


def test_a_transcript_with_only_turn_ended_lines_has_no_turns() -> None:
    assert parse_jsonl(jsonl(turn_ended(), turn_ended("aborted"))) == ()


def test_legacy_txt_sections() -> None:
    text = (
        "user:\n"
        "hello there\n"
        "A:\n"
        "world\n"
        "[Tool call] Shell\n"
        "  command: ls -la\n"
        "[Tool result]\n"
        "abc\n"
        "[Thinking] hmm\n"
        "user: again\n"
        "A: ok\n"
    )
    assert parse_txt(text.encode()) == (
        turn(11, 3, 8, ["Bash"], ["ls"]),
        turn(5, 0, 2),
    )


def test_discovery_prefers_jsonl_walks_only_agent_transcripts_and_finds_subagents(
    tmp_path: Path,
) -> None:
    home = AgentHomeWriter(tmp_path)
    nested = home.transcript("c1", [user("x")])
    home.legacy_transcript("c1", "user:\nx\n")
    legacy = home.legacy_transcript("c2", "user:\ny\n")
    flat = home.transcript("c3", [user("z")], flat=True)
    home.legacy_transcript("c3", "user:\nz\n", slug="other-project")
    child = home.transcript("k1", [user("sub")], parent_id="c1")
    loose_child = home.transcript("k1", [user("sub")], slug="other-project", flat=True)
    mcp = tmp_path / "projects" / "home-me-app" / "mcps" / "m1" / "m1.jsonl"
    mcp.parent.mkdir(parents=True)
    mcp.write_text(json.dumps(user("tool log")) + "\n")
    found = find_transcripts(tmp_path)
    assert {cid: f.path for cid, f in found.items()} == {
        "c1": nested,
        "c2": legacy,
        "c3": flat,
        "k1": child,
    }
    assert found["k1"].parent_id == "c1" and found["c1"].parent_id is None
    assert found["c1"].slug == "home-me-app"
    assert loose_child.is_file()  # found, but the subagent's copy names the parent


def test_no_cursor_home_is_no_transcripts(tmp_path: Path) -> None:
    assert find_transcripts(tmp_path / "missing") == {}


def test_odd_records_are_skipped_never_an_error() -> None:
    lines = [
        b'{"role":"user","message":{"content":[{"type":"text","text":5},"x",null]}}',
        b'{"role":"assistant","message":"not a message"}',
        b'{"role":"assistant","message":{"content":[{"type":"tool_use","name":7,"input":[]}]}}',
        b'{"role":"user","content":"top-level content"}',
        b"[" * 5000 + b"]" * 5000,
        b"\xff\xfe not utf-8 \x80",
        b'{"role":"assistant","message":{"content":[{"type":"text","text":"ok\xe9"}]}}',
        b"1e999999",
    ]
    assert parse_jsonl(b"\n".join(lines)) == (turn(17, 0, 3),)
    assert parse_txt(b"[Tool call]\n[Tool result]\n\xff\nA:\n") == (turn(0, 1, 0),)


def _settle(home: Path) -> None:
    """Every folder under `home` last changed a minute ago (files keep their own times)."""
    old = time.time_ns() - 60_000_000_000
    for folder in [home, *(p for p in home.rglob("*") if p.is_dir())]:
        os.utime(folder, ns=(old, old))


def test_a_later_look_sees_every_added_moved_and_removed_transcript(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("a", [user("q")])
    home.transcript("b", [user("q")], flat=True)
    home.transcript("s", [user("q")], parent_id="a")
    _settle(tmp_path)
    assert sorted(find_transcripts(tmp_path)) == ["a", "b", "s"]
    assert sorted(find_transcripts(tmp_path)) == ["a", "b", "s"]  # listings reused
    home.transcript("c", [user("q")], parent_id="a")  # into a settled subagents/ folder
    home.transcript("d", [user("q")], slug="home-me-other")  # a new project
    (home.transcripts_dir("home-me-app") / "b.jsonl").unlink()
    found = find_transcripts(tmp_path)
    assert sorted(found) == ["a", "c", "d", "s"]
    assert found["c"].parent_id == "a" and found["d"].slug == "home-me-other"
    _settle(tmp_path)
    moved = home.transcripts_dir("home-me-app") / "a" / "a.jsonl"
    moved.rename(moved.with_suffix(".txt"))  # its folder's mtime moves
    again = find_transcripts(tmp_path)
    assert sorted(again) == ["a", "c", "d", "s"] and again["a"].legacy


def test_a_listing_of_a_folder_changed_just_now_is_never_reused(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("a", [user("q")], flat=True)
    folder = home.transcripts_dir("home-me-app")
    mtime = time.time_ns()  # changed just now by the clock the listing reads (tests move it)
    os.utime(folder, ns=(mtime, mtime))
    assert sorted(find_transcripts(tmp_path)) == ["a"]
    # Another transcript lands within the same timestamp tick: the folder's mtime stays.
    home.transcript("b", [user("q")], flat=True)
    os.utime(folder, ns=(mtime, mtime))
    assert sorted(find_transcripts(tmp_path)) == ["a", "b"]


def test_jsonl_lines_end_at_newlines_only() -> None:
    """JSON.stringify leaves U+2028, U+2029 and U+0085 in a string as they are: the line is
    one record (str.splitlines cut it, and both halves were skipped). Leading whitespace, a
    CRLF end and trailing whitespace are JSON's own whitespace; text after the object is not."""
    text = "one\u2028two\u2029three\x85four"
    lines = [
        json.dumps(user(text), ensure_ascii=False),
        "  " + json.dumps(assistant("a" * 7)) + " \r",
        json.dumps(assistant("b" * 5)) + " trailing",
    ]
    data = "\n".join(lines).encode()
    assert parse_jsonl(data) == (turn(len(text), 0, 7),)
