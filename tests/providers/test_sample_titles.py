"""Sample data carries conversation titles, as Cursor's files do (composerData and header
`name`, a CLI store's meta `name`): the demo's conversations read as titles, not hex ids."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from codeburn.providers import today
from codeburn.providers.samples import (
    Cursor3Spec,
    SampleSpec,
    generate_cursor3_profile,
    generate_sample_profile,
)
from codeburn.providers.samples.titles import TITLES, sample_title
from codeburn.server.service import UsageService, named_period
from tests.usage_fixtures import isolated_env

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def _names(db: Path) -> dict[str, str | None]:
    """composerData id → its `name` (None when it has none)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT substr(key, 14), value FROM cursorDiskKV WHERE key LIKE 'composerData:%'"
        ).fetchall()
    finally:
        conn.close()
    return {str(k): json.loads(v).get("name") for k, v in rows}


def _titles(db: Path) -> dict[str, str | None]:
    """Conversation id → title, as the last 30 days' report shows them."""
    report = UsageService(db).report(named_period("30days", today()), sync=False)
    return {c["id"]: c["title"] for c in report["conversations"]}


def test_titles_are_fixed_by_the_seed_and_each_used_once_before_any_repeats() -> None:
    first = [sample_title(7, "bubbles", i) for i in range(len(TITLES))]
    assert sorted(first) == sorted(TITLES)
    assert [sample_title(7, "bubbles", i) for i in range(len(TITLES))] == first
    assert sample_title(7, "bubbles", len(TITLES)) == first[0]
    assert [sample_title(8, "bubbles", i) for i in range(10)] != first[:10]
    assert all('"' not in t and "\\" not in t and t.isascii() for t in TITLES)  # hand-made JSON


def test_the_bubbles_sample_names_every_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_env(tmp_path, monkeypatch)
    spec = SampleSpec(seed=3, conversations=40, bubbles=(4, 6), days=10)
    info = generate_sample_profile(tmp_path / "Cursor", spec)
    names = _names(info.db_path)
    assert len(names) == 40
    assert sorted(n for n in names.values() if n) == sorted(
        sample_title(3, "bubbles", i) for i in range(40)
    )
    titles = _titles(info.db_path)
    assert {cid: titles.get(cid) for cid in names} == names
    # Requests of the agent stream alone belong to no conversation: untitled, as in Cursor.
    assert all(t is None for cid, t in titles.items() if cid not in names)


def test_the_cursor3_sample_names_ide_conversations_and_cli_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_env(tmp_path, monkeypatch)
    home = tmp_path / "home"
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(home))
    spec = Cursor3Spec(seed=5, conversations=20, turns=(2, 3), classic=2, classic_bubbles=(4, 4))
    info = generate_cursor3_profile(tmp_path / "Cursor", home, spec)
    titles = _titles(info.db_path)
    ide = {sample_title(5, "ide", i) for i in range(20)}
    classic = {sample_title(5, "bubbles", i) for i in range(2)}
    cli = {sample_title(5, "cli", i) for i in range(spec.cli_sessions)}
    shown = {t for t in titles.values() if t}
    assert cli <= shown  # every CLI store's meta name
    assert classic <= shown
    assert len(shown & ide) == 19  # the 20th has an encrypted root: unreadable, not listed
    assert shown <= ide | classic | cli
    # Untitled, as in Cursor's files: the CLI's transcripts without a store, a subagent's
    # transcript and the older part's request known only from the agent stream.
    assert sum(t is None for t in titles.values()) == spec.cli_transcripts + 1 + 1
