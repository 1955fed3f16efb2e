"""The agent memo: transcripts' turns by the sha256 of their bytes, in a file that survives
cache version bumps. A read with it gives exactly what a read without it gives."""

from __future__ import annotations

import calendar
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.agent_memo import FILE, load_agent_memo, save_agent_memo
from codeburn.cache.local_files import LocalFiles
from codeburn.providers.home import reader as cursor_agent
from codeburn.providers.home.memo import (
    MEMO_VERSION,
    MemoEncoder,
    content_key,
    memo_bytes,
    read_memo,
)
from codeburn.providers.home.reader import AgentRead, AgentReader, take_snapshot
from codeburn.providers.samples.home_writer import (
    AgentHomeWriter,
    TurnSpec,
    assistant,
    shell,
    tool_result,
    user,
)
from tests.memo_file import InMemoryMemoFile as _File
from tests.real_cursor import SAMPLES, copy_sample, report

T0 = 1_780_000_000_000
SECRET = "curl -H 'Authorization: Bearer sk-live-0123456789' https://x | jq .a && npm test"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    real = cursor_agent.parse_transcript

    def spy(path: Path, data: bytes | None = None) -> object:
        names.append(path.name)
        return real(path, data)

    monkeypatch.setattr(cursor_agent, "parse_transcript", spy)
    return names


def _home(root: Path) -> AgentHomeWriter:
    home = AgentHomeWriter(root)
    records = [user("q" * 40), assistant("r" * 80, tools=[shell(SECRET)]), tool_result("o" * 9)]
    home.transcript("a", records, mtime_ms=T0)
    home.transcript("b", [user("w" * 12), assistant("x" * 30)], mtime_ms=T0, slug="home-me-b")
    home.legacy_transcript("c", "user: hello there\nA: the answer\n", mtime_ms=T0)
    return home


def _read(root: Path, memo: _File | None) -> AgentRead:
    return AgentReader(root, {}, memo).read(take_snapshot(root))


def test_a_read_with_the_memo_parses_nothing_and_reads_the_same(
    tmp_path: Path, parsed: list[str]
) -> None:
    _home(tmp_path)
    expected = _read(tmp_path, None)
    kept = _File()
    assert _read(tmp_path, kept) == expected
    assert kept.saves == 1 and sorted(parsed) == [
        "a.jsonl",
        "a.jsonl",
        "b.jsonl",
        "b.jsonl",
        "c.txt",
        "c.txt",
    ]
    memo = read_memo(kept.data)
    assert memo is not None and len(memo) == 3
    parsed.clear()
    assert _read(tmp_path, kept) == expected  # a start whose agent-files cache is gone
    assert parsed == [] and kept.saves == 1  # nothing parsed, nothing new to keep


def test_a_changed_transcript_is_parsed_and_replaces_its_old_key(
    tmp_path: Path, parsed: list[str]
) -> None:
    home = _home(tmp_path)
    kept = _File()
    _read(tmp_path, kept)
    before = read_memo(kept.data)
    assert before is not None
    home.transcript("b", [user("w" * 12), assistant("x" * 30), user("z" * 7)], mtime_ms=T0)
    parsed.clear()
    got = _read(tmp_path, kept)
    assert parsed == ["b.jsonl"]
    assert [t.user_chars for t in got.transcripts["b"].turns] == [12, 7]
    assert got == _read(tmp_path, None)
    after = read_memo(kept.data)
    assert after is not None and kept.saves == 2
    assert len(after) == 3 and len(set(after) - set(before)) == 1  # the old bytes' key is gone


def test_the_same_bytes_as_txt_and_as_jsonl_are_two_keys() -> None:
    data = b'{"role":"user","message":{"content":"hi"}}\n'
    assert content_key(data, legacy=True) != content_key(data, legacy=False)
    assert content_key(data, legacy=False) == content_key(bytes(data), legacy=False)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-3] + b"xyz",  # the checksum no longer matches
        lambda data: b"something else entirely",
        lambda data: memo_bytes({}).replace(b'"version":%d' % MEMO_VERSION, b'"version":0'),
        lambda data: data.replace(b"codeburn-agent-memo", b"codeburn-blobs-memo"),
    ],
)
def test_a_damaged_or_foreign_memo_is_no_memo_and_is_rebuilt(
    tmp_path: Path, parsed: list[str], damage: Any
) -> None:
    _home(tmp_path)
    kept = _File()
    expected = _read(tmp_path, kept)
    assert kept.data is not None
    broken = _File(damage(kept.data))
    assert read_memo(broken.data) is None
    parsed.clear()
    assert _read(tmp_path, broken) == expected
    assert sorted(parsed) == ["a.jsonl", "b.jsonl", "c.txt"]
    assert broken.saves == 1 and read_memo(broken.data) == read_memo(kept.data)


def test_rows_that_are_no_turns_are_a_miss(tmp_path: Path, parsed: list[str]) -> None:
    _home(tmp_path)
    kept = _File()
    expected = _read(tmp_path, kept)
    memo = read_memo(kept.data)
    assert memo is not None
    bad = _File(memo_bytes({k: [["not", "a", "turn"]] for k in memo}))
    parsed.clear()
    assert _read(tmp_path, bad) == expected
    assert sorted(parsed) == ["a.jsonl", "b.jsonl", "c.txt"]
    assert read_memo(bad.data) == memo  # rebuilt with the parsed turns


def test_the_memo_holds_no_path_text_or_command_line(tmp_path: Path) -> None:
    _home(tmp_path)
    kept = _File()
    _read(tmp_path, kept)
    assert kept.data is not None
    text = kept.data.decode("utf-8")
    assert "sk-live" not in text and "Authorization" not in text
    assert str(tmp_path) not in text and "home-me" not in text
    assert "qqqq" not in text and "hello there" not in text
    assert '"curl"' in text and f'"version":{MEMO_VERSION}' in text  # command names only


def test_the_memo_file_survives_a_version_bump_and_is_private(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert load_agent_memo(cache) is None
    assert save_agent_memo(cache, b"memo")
    assert (cache / FILE).stat().st_mode & 0o777 == 0o600
    files = LocalFiles(cache)
    files.save_agent_memo(b"again")
    assert files.load_agent_memo() == b"again"
    assert "v" not in FILE.removeprefix("cursor-agent-memo")  # no version in its name
    (cache / FILE).unlink()
    (cache / FILE).mkdir()  # something else in its place: no memo, no error
    assert load_agent_memo(cache) is None


def test_a_store_only_home_keeps_no_memo(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    store = home.cli_session("s", [TurnSpec("hi", ["ok"])], created_ms=T0)
    os.utime(store, ns=(T0 * 1_000_000, T0 * 1_000_000))
    kept = _File()
    assert _read(tmp_path, kept).sessions
    assert kept.saves == 0 and kept.data is None


# -- the CLI, on a real transcript ---------------------------------------------------------------


def _real_home(tmp_path: Path) -> Path:
    """t01's real `.txt` transcript, with a `.jsonl` one beside it (the real sample has none)."""
    home = copy_sample("t01", tmp_path) / "home" / ".cursor"
    mtime = calendar.timegm(time.strptime(SAMPLES["t01"].mtime, "%Y-%m-%dT%H:%M:%SZ"))
    records = [user("q" * 400), assistant("r" * 900, tools=[shell("git status")])]
    AgentHomeWriter(home).transcript("j-1", records, slug="home-liam", mtime_ms=mtime * 1000)
    return home


def _memo_kept(run: Path) -> Path:
    """The cache folder of a start after a version bump: only the memo files of `run`'s."""
    written = run / "cache" / FILE
    for _ in range(3000):  # written by a process nobody waits for
        if read_memo(load_agent_memo(run / "cache")):
            break
        time.sleep(0.01)
    assert read_memo(load_agent_memo(run / "cache"))
    bumped = run.parent / f"{run.name}-bumped"
    (bumped / "cache").mkdir(parents=True)
    shutil.copyfile(written, bumped / "cache" / FILE)
    return bumped


def _transcript(home: Path) -> Path:
    return next(home.glob("projects/home-liam/agent-transcripts/38c04b90-*.txt"))


def test_a_report_with_only_the_memo_kept_equals_a_cold_one(tmp_path: Path) -> None:
    home = _real_home(tmp_path)
    cold, _ = report("t01", tmp_path / "cold", home=home, db=tmp_path / "none.vscdb")
    assert cold["totals"]["calls"] == 33  # t01's 32 turns and the jsonl's one
    bumped = _memo_kept(tmp_path / "cold")
    with_memo, _ = report("t01", bumped, home=home, db=tmp_path / "none.vscdb")
    assert json.dumps(with_memo, sort_keys=True) == json.dumps(cold, sort_keys=True)


def test_a_transcript_changed_with_the_memo_kept_is_read_again(tmp_path: Path) -> None:
    home = _real_home(tmp_path)
    report("t01", tmp_path / "cold", home=home, db=tmp_path / "none.vscdb")
    bumped = _memo_kept(tmp_path / "cold")
    path = _transcript(home)
    stat, text = path.stat(), path.read_text(encoding="utf-8")
    # The same size and mtime, other bytes (a new turn opens): only the content tells.
    changed = text.replace("\n- Status reports\n", "\nuser: tus report\n", 1)
    assert changed != text and len(changed) == len(text)
    path.write_text(changed, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    with_memo, _ = report("t01", bumped, home=home, db=tmp_path / "none.vscdb")
    fresh, _ = report("t01", tmp_path / "fresh", home=home, db=tmp_path / "none.vscdb")
    assert with_memo["totals"]["calls"] == 34
    assert json.dumps(with_memo, sort_keys=True) == json.dumps(fresh, sort_keys=True)


def test_the_encoder_keeps_texts_and_writes_what_a_fresh_one_writes() -> None:
    rows_a: list[list[Any]] = [[None, 4, 0, 8, None, ["Bash"], ["git"], None, None]]
    rows_b: list[list[Any]] = [[None, 1, 2, 3, "gpt-5", [], [], "gpt-5", None]]
    encoder = MemoEncoder()
    first = encoder.encode({"ja": rows_a, "jb": rows_b})
    assert first == memo_bytes({"ja": rows_a, "jb": rows_b})
    assert read_memo(first) == {"ja": rows_a, "jb": rows_b}
    rows_b2: list[list[Any]] = [[None, 9, 9, 9, None, [], [], None, 5]]
    second = encoder.encode({"ja": rows_a, "jc": rows_b2})  # one kept, one new
    assert second == memo_bytes({"ja": rows_a, "jc": rows_b2})
    assert read_memo(second) == {"ja": rows_a, "jc": rows_b2}


def test_a_long_lived_reader_writes_the_memo_only_after_reading_a_transcript_in_full(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path)
    kept = _File()
    reader = AgentReader(tmp_path, {}, kept)
    reader.read(take_snapshot(tmp_path))
    assert kept.saves == 1
    reader.read(take_snapshot(tmp_path))  # every file from the reader's entries
    assert kept.saves == 1
    home.transcript("d", [user("n" * 5)], mtime_ms=T0)
    reader.read(take_snapshot(tmp_path))
    memo = read_memo(kept.data)
    assert kept.saves == 2 and memo is not None and len(memo) == 4
