"""Real files written by Cursor (tests/data/real-cursor, see its SOURCES.md) give the figures
derived from them by hand: SQL over the copied databases, a per-section count of the transcript.
Each runs the CLI at the sample's clock (tests/real_cursor.py)."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from codeburn.providers import combine as agent_combine
from codeburn.providers.agent import protobuf as pb
from codeburn.providers.agent.graph import decode_root, root_fields
from codeburn.providers.agent.stream import StreamWalker, content_chars, parse_record
from codeburn.providers.home.cli_store import CliSession
from codeburn.providers.ide.layout3.headers import fast_variant
from tests.real_cursor import copy_sample, report


def test_p01_prices_the_served_model_composer_2_5_fast(tmp_path: Path) -> None:
    root = copy_sample("p01", tmp_path)
    db = root / "User" / "globalStorage" / "state.vscdb"
    out, _ = report("p01", tmp_path, "--provider", "cursor", db=db)
    # SQL over the copy: the conversation 718f923a… has 34 bubbles; 8 assistant bubbles have
    # text, sum((length(text)+3)/4) = 1014; composerData.contextTokensUsed = 36224 (the
    # meter: one conversation-level record). 8 + 1 calls, created 2026-06-18T00:11:22Z.
    totals = out["totals"]
    assert (totals["calls"], totals["inputTokens"], totals["outputTokens"]) == (9, 36224, 1014)
    # The served model: all 12 `redacted-reasoning` blocks of the joined agentKv JSON rows
    # say providerOptions.cursor.modelName = composer-2.5-fast (bubbles and modelConfig
    # select composer-2.5, with the parameter {id: fast, value: "true"}).
    assert [(m["model"], m["calls"]) for m in out["models"]] == [("composer-2.5-fast", 9)]
    # docs/pricing.md: composer-2.5-fast is $3 input / $15 output per million tokens.
    assert totals["cost"] == pytest.approx(36224 * 3e-6 + 1014 * 15e-6)
    assert [p["project"] for p in out["projects"]] == ["-home-johnas-.config-hypr"]
    assert [d["date"] for d in out["days"]] == ["2026-06-18"]
    assert out["warnings"] == []


@pytest.mark.parametrize(
    ("model", "selected", "parameters", "expected"),
    [
        ("composer-2.5", "composer-2.5", '[{"id": "fast", "value": "true"}]', "composer-2.5-fast"),
        ("composer-2.5", "composer-2.5", '[{"id": "fast", "value": true}]', "composer-2.5-fast"),
        ("composer-2.5", "composer-2.5", '[{"id": "fast", "value": false}]', "composer-2.5"),
        ("composer-2.5", "gpt-5", '[{"id": "fast", "value": true}]', "composer-2.5"),
        ("default", "default", '[{"id": "fast", "value": true}]', "default"),
        (None, "composer-2", '[{"id": "fast", "value": true}]', "composer-2-fast"),
        ("composer-2.5-fast", None, '[{"id": "fast", "value": true}]', "composer-2.5-fast"),
        ("composer-2.5", None, "not json", "composer-2.5"),
    ],
)
def test_the_fast_parameter_selects_the_fast_variant(
    model: str | None, selected: str | None, parameters: str, expected: str | None
) -> None:
    assert fast_variant(model, selected, parameters) == expected


def _c01_chars() -> dict[str, dict[str, int]]:
    # SQL over each store (JSON blobs only, CAST(data AS TEXT)): per role, the length of a
    # string `content`, else the sum over json_each(content) of length($.result) for
    # `tool-result` blocks, else length($.text).
    return {
        "d4bdc11a": {"system": 14069, "user": 4141, "tool": 459698, "assistant": 64883},
        "dd3957b4": {"system": 14069, "user": 2206, "tool": 326, "assistant": 22970},
    }


def test_c01_counts_what_the_model_read_from_its_tool_results(tmp_path: Path) -> None:
    home = copy_sample("c01", tmp_path) / "home" / ".cursor"
    out, _ = report("c01", tmp_path, "--provider", "cursor-agent", home=home)
    totals = out["totals"]
    chars = _c01_chars()
    # docs/local-data.md: input = ceil((user + context chars) / 4) per turn, context = system + tool
    # results; output = ceil(assistant chars / 4) per turn. Rounding up per turn adds less
    # than one token per call to the whole-store figure.
    low_in = sum(math.ceil((c["system"] + c["user"] + c["tool"]) / 4) for c in chars.values())
    low_out = sum(math.ceil(c["assistant"] / 4) for c in chars.values())  # text + reasoning
    assert low_in == 123_628
    assert low_in <= totals["inputTokens"] < low_in + totals["calls"]
    # The turns are root field 2 (no field 8): 14 + 17 turn blobs `{1 user, 2* steps}`. A
    # schema-less protobuf dump of each turn's steps, summing ceil(len(step 1.1 text) / 4) per
    # turn (assistant text; thinking steps, field 3, count in no graph turn): 6,362 + 3,658.
    assert (totals["calls"], totals["outputTokens"]) == (14 + 17, 6_362 + 3_658)
    # (The JSON history alone, read before, gave its assistant text and reasoning instead.)
    assert low_out == 16_221 + 5_743
    # The tool results alone are 460,024 characters (≈ 115K tokens) of it.
    assert totals["inputTokens"] > 115_000
    assert [m["model"] for m in out["models"]] == ["gpt-5"]  # meta.lastUsedModel
    # The system prompt says `Working directory: /root`, and md5("/root") =
    # 887904812217cca9bc2b9adb875daf42 names the stores' chats/ folder (the meta names none).
    assert [p["project"] for p in out["projects"]] == ["-root"]
    assert [d["date"] for d in out["days"]] == ["2025-08-08", "2025-08-10"]  # meta.createdAt


def test_t01_sections_split_at_assistant_too(tmp_path: Path) -> None:
    home = copy_sample("t01", tmp_path) / "home" / ".cursor"
    out, _ = report("t01", tmp_path, home=home)
    totals = out["totals"]
    # By hand over the transcript (awk-like: a line starting `user:` opens a turn and the user
    # section, `assistant:`, `A:` or `[Thinking]` the assistant section, `[Tool call]` a tool
    # section, `[Tool result]` a result section; each non-empty line counts its characters
    # without its marker): 32 turns, user 52,855, tool results 2,064, assistant 114,200.
    assert totals["calls"] == 32
    low_in, low_out = math.ceil((52_855 + 2_064) / 4), math.ceil(114_200 / 4)
    assert low_in <= totals["inputTokens"] < low_in + 32
    assert low_out <= totals["outputTokens"] < low_out + 32
    # Dated by the file's time (2026-01-25T12:00Z), the project from the folder name.
    assert [d["date"] for d in out["days"]] == ["2026-01-25"]
    assert [p["project"] for p in out["projects"]] == ["-home-liam"]


# The shapes the real files show, on their own (synthetic rows of the real shape).
READ_RESULT = "x" * 14066  # p01's first `Read` result: 14,066 characters


def _row(role: str, content: object, **cursor: str) -> str:
    record: dict[str, object] = {"role": role, "content": content}
    if cursor:
        record["providerOptions"] = {"cursor": cursor}
    return json.dumps(record)


def test_a_tool_result_counts_its_result_once_as_context() -> None:
    both = {"type": "tool-result", "toolName": "Read", "result": READ_RESULT,
            "experimental_content": [{"type": "text", "text": READ_RESULT}]}  # fmt: skip
    only_blocks = {"type": "tool-result", "experimental_content": [{"type": "text", "text": "ab"}]}
    assert content_chars([both]) == 14066
    assert content_chars([only_blocks]) == 2
    assert content_chars([{"type": "tool-result", "result": {"k": 1}}]) == len('{"k": 1}')
    walker = StreamWalker()
    walker.feed_records(
        r
        for r in map(parse_record, [
            _row("user", [{"type": "text", "text": "hello"}], requestId="r1"),
            _row("assistant", [{"type": "tool-call", "toolName": "Read", "args": {}}]),
            _row("tool", [both]),
        ])
        if r is not None
    )  # fmt: skip
    request = walker.requests["r1"]
    assert (request.user_chars, request.context_chars) == (5, 14066)
    assert request.input_tokens == math.ceil((5 + 14066) / 4)


def test_the_model_named_in_a_content_block_is_the_served_one() -> None:
    reasoning = {"type": "redacted-reasoning", "data": "…",
                 "providerOptions": {"cursor": {"modelName": "composer-2.5-fast"}}}  # fmt: skip
    walker = StreamWalker()
    walker.feed_records(
        r
        for r in map(parse_record, [
            _row("user", "q", requestId="r1", modelName="composer-2.5"),
            _row("assistant", [reasoning, {"type": "text", "text": "a"}]),
        ])
        if r is not None
    )  # fmt: skip
    request = walker.requests["r1"]
    assert (request.model, request.served) == ("composer-2.5", "composer-2.5-fast")


def _ref(blobs: dict[str, bytes], data: bytes) -> bytes:
    digest = hashlib.sha256(data).digest()
    blobs[digest.hex()] = data
    return digest


def test_an_aug_2025_cli_root_keeps_its_turns_in_field_2() -> None:
    blobs: dict[str, bytes] = {}
    user = _ref(blobs, pb.message(pb.bytes_field(1, "hello"), pb.bytes_field(2, "uuid")))
    step = _ref(blobs, pb.bytes_field(1, pb.bytes_field(1, "answer!")))
    turn = _ref(blobs, pb.message(pb.bytes_field(1, user), pb.bytes_field(2, step)))
    graph = decode_root(pb.bytes_field(2, turn), blobs.get)
    assert [(t.user_chars, t.assistant_chars) for t in graph.turns] == [(5, 7)]
    assert graph.skipped_blobs == 0


def test_p11_a_workspace_database_given_as_the_database_is_named_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # p11 holds no cursorDiskKV; its ItemTable has composer.composerData (26 inline composers
    # of ~0.42) and aichat.chatdata: a workspace database, although the repo put it elsewhere.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    db = copy_sample("p11", tmp_path) / "User" / "globalStorage" / "state.vscdb"
    out, _ = report("p11", tmp_path, "--provider", "cursor", db=db)
    expected = tmp_path / "xdg" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    assert out["warnings"] == [
        f"Cursor storage format not recognized: {db} is a workspace database (one folder's"
        f" state); use the global database {expected}"
    ]
    assert out["totals"]["calls"] == 0


def test_p01_its_workspace_database_names_the_global_one_beside_it(tmp_path: Path) -> None:
    # Cursor 3.7.36's workspace database has an empty cursorDiskKV (SQL: count(*) = 0).
    user = copy_sample("p01", tmp_path) / "User"
    db = user / "workspaceStorage" / "c173a3bcfe6dee08c7a295ba14e5bd69" / "state.vscdb"
    out, _ = report("p01", tmp_path, "--provider", "cursor", db=db)
    assert out["warnings"] == [
        f"Cursor storage format not recognized: {db} is a workspace database (one folder's"
        f" state); use the global database {user / 'globalStorage' / 'state.vscdb'}"
    ]


def test_the_workspace_whose_md5_names_the_chats_folder_wins() -> None:
    folder = hashlib.md5(b"/home/me/b", usedforsecurity=False).hexdigest()
    session = CliSession("s", None, None, "/home/me/a", None, None, "/home/me/b", folder)
    assert agent_combine._session_project(session) == "-home-me-b"
    elsewhere = CliSession("s", None, None, "/home/me/a", None, None, "/home/me/b", "0" * 32)
    assert agent_combine._session_project(elsewhere) == "-home-me-a"  # the meta's, as before
    only_prompt = CliSession("s", None, None, None, None, None, "/home/me/b", "0" * 32)
    assert agent_combine._session_project(only_prompt) == "-home-me-b"
    assert agent_combine._session_project(CliSession("s", None, None, None, None)) is None


def test_root_field_9_is_a_uri_by_its_content_never_by_its_length() -> None:
    # p01's root (protobuf dump): field 9 = b"file:///home/johnas/.config/hypr", 32 bytes long,
    # the length of a blob reference.
    uri = b"file:///home/johnas/.config/hypr"
    ref = hashlib.sha256(b"some blob").digest()
    assert len(uri) == len(ref) == 32
    root = pb.message(pb.bytes_field(9, uri), pb.bytes_field(9, ref))
    assert root_fields(root).workspace_uris == (uri.decode(),)
