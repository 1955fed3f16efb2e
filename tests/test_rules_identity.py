"""One rules identity for every derived file (docs/caches.md#rules-identity).

The identity is a digest of the deriving code and the price catalogue, so a rule changed on its
own moves it without anyone bumping a version; a user's caches written under the old rules give
the new figures on the next run, sealed days included, and a sealed day whose source is gone
keeps the figures it had.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.results_cache import FILE as RESULTS_FILE
from codeburn.providers.agents.state import IDENTITY
from codeburn.providers.home.memo import memo_bytes as agent_memo_bytes
from codeburn.providers.home.memo import read_memo as read_agent_memo
from codeburn.providers.ide.layout3.memo import BlobMemo, memo_head_ok, memo_rows, rows_bytes
from codeburn.providers.ide.layout3.memo import read_memo as read_blob_memo
from codeburn.providers.localtime import parse_iso_ms
from codeburn.providers.rules import DERIVING, PACKAGE_ROOT, RULES, deriving_files, rules_identity
from codeburn.providers.samples.agent_logs_writer import AgentLogsSpec, write_agent_logs
from codeburn.providers.samples.cursor3 import Cursor3Spec, generate_cursor3_profile
from codeburn.providers.samples.profile_writer import ProfileWriter
from tests.agent_fixtures import assistant, usage, write

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


PACKAGES = ("providers", "cache", "server", "sync")
NOW = "2026-11-20T12:00:00Z"  # a fixed moment: the days below are sealed days of its month
MAIN = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"


def _copy_packages(target: Path) -> Path:
    """The product's packages as an installed `codeburn/` folder holds them."""
    root = target / "codeburn"
    for package in PACKAGES:
        shutil.copytree(
            PACKAGE_ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is no longer in {path}"
    path.write_text(text.replace(old, new, 1))


def test_the_identity_covers_the_decoders_the_prices_and_the_attribution() -> None:
    names = deriving_files()
    for needed in (
        "providers/calls.py",  # CHARS_PER_TOKEN
        "providers/pricing/data/model_prices.json",
        "providers/agents/claude_code.py",
        "providers/ide/layout3/memo.py",
        "cache/usage_slices.py",
        "server/service/derive.py",
    ):
        assert needed in names
    assert not [n for n in names if n.startswith("providers/samples/")]
    assert all(n.split("/")[0] in {d.split("/")[0] for d in DERIVING} for n in names)


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        ("providers/calls.py", "CHARS_PER_TOKEN: Final = 4", "CHARS_PER_TOKEN: Final = 3"),
        ("providers/pricing/prices.py", '"composer-1": (1.25, 10,', '"composer-1": (1.25, 11,'),
        (
            "providers/pricing/data/model_prices.json",
            '"zai-glm-latest": [1.4e-06',
            '"zai-glm-latest": [1.5e-06',
        ),
        ("server/service/derive.py", "def ", "def  "),
    ],
)
def test_a_rule_changed_on_its_own_moves_the_identity(
    tmp_path: Path, where: str, old: str, new: str
) -> None:
    root = _copy_packages(tmp_path)
    assert rules_identity(root) == RULES  # the same bytes: the same identity
    _edit(root / where, old, new)
    assert rules_identity(root) != RULES


def test_what_derives_nothing_leaves_the_identity() -> None:
    """The editor's wording or the sample writers change no derived file."""
    names = deriving_files()
    assert "server/lsp/status.py" not in names
    assert "server/cli/text.py" not in names
    assert "providers/samples/generator.py" not in names


# -- a user's cache folder across a change of rules ---------------------------------------------


def _machine(tmp_path: Path) -> dict[str, str]:
    """Cursor bubbles on three sealed days, a Claude Code session on a fourth; our folders."""
    with ProfileWriter(tmp_path / "Cursor") as cursor:
        for n, day in enumerate(("2026-11-15", "2026-11-16", "2026-11-17")):
            at = f"{day}T10:00:00Z"
            cursor.bubble(f"c{n}", "u", role="user", text="please fix " * 40, created_at=at)
            cursor.bubble(
                f"c{n}", "a", role="assistant", text="done " * 401, created_at=at, model="gpt-5"
            )
    write(
        tmp_path / "claude" / "projects" / "-home-dev-shop" / "s1.jsonl",
        [assistant("m1", "r1", "2026-11-14T09:00:00Z", usage(inp=1000, out=2000, read=0))],
    )
    (tmp_path / "codex").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEBURN_", "PYTHON"))}
    env.update(
        CODEBURN_NOW=NOW,
        TZ="UTC",
        CODEBURN_CACHE_DIR=str(tmp_path / "cache"),
        CODEBURN_CONFIG_DIR=str(tmp_path / "config"),
        CODEBURN_CURSOR_SYNC="0",
        CODEBURN_CURSOR_DB=str(cursor.db_path),
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
        CODEX_HOME=str(tmp_path / "codex"),
        HOME=str(tmp_path / "home"),
    )
    return env


def _report(env: dict[str, str], code_root: Path | None = None) -> dict[str, Any]:
    """`codeburn report` of the month, by the repository's code or by a copy of it."""
    if code_root is not None:
        env = {**env, "PYTHONPATH": str(code_root.parent)}
    out = subprocess.run(
        [sys.executable, "-c", MAIN, "report", "--period", "month", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def _day(report: dict[str, Any], day: str) -> dict[str, Any] | None:
    """The day's row: one tool's usage only, on the days `_machine` writes."""
    return next((dict(row) for row in report["days"] if row["date"] == day), None)


def test_caches_of_older_rules_give_the_new_figures_and_keep_what_is_gone(
    tmp_path: Path,
) -> None:
    env = _machine(tmp_path / "machine")
    old = _report(env)
    assert _day(old, "2026-11-16") is not None
    claude_day = _day(old, "2026-11-14")
    assert claude_day is not None and claude_day["calls"] == 1
    daily = json.loads((Path(env["CODEBURN_CACHE_DIR"]) / "daily.v5.json").read_text())
    assert daily["rules"] == RULES and "2026-11-16" in daily["days"]  # sealed by the old rules

    # A new release counts 2 characters a token, not 4: nothing else changes, no version bumped.
    new_code = _copy_packages(tmp_path / "new")
    _edit(
        new_code / "providers/calls.py", "CHARS_PER_TOKEN: Final = 4", "CHARS_PER_TOKEN: Final = 2"
    )
    # Meanwhile Claude Code deleted the old session (its `cleanupPeriodDays`).
    (tmp_path / "machine" / "claude" / "projects" / "-home-dev-shop" / "s1.jsonl").unlink()

    upgraded = _report(env, new_code)
    fresh_env = {**env, "CODEBURN_CACHE_DIR": str(tmp_path / "fresh-cache")}
    fresh = _report(fresh_env, new_code)

    for day in ("2026-11-15", "2026-11-16", "2026-11-17"):
        before, after = _day(old, day), _day(upgraded, day)
        assert before is not None and after is not None
        assert after == _day(fresh, day)  # the new rules' figures, sealed day or not
        assert after["outputTokens"] > before["outputTokens"]  # ... which differ from the old
    assert _day(upgraded, "2026-11-14") == claude_day  # its log is gone: kept
    assert _day(fresh, "2026-11-14") is None  # nothing else knows that day

    renewed = json.loads((Path(env["CODEBURN_CACHE_DIR"]) / "daily.v5.json").read_text())
    assert renewed["rules"] != RULES and renewed["rules"] == rules_identity(new_code)
    assert "2026-11-16" in renewed["days"]  # sealed again, under the new rules


def test_every_derived_file_carries_the_rules_identity(tmp_path: Path) -> None:
    """Cursor 3.x (blob memo), agent transcripts and the CLI (agent files and memo), Claude
    Code and Codex (their logs' state), bubbles (results and daily caches)."""
    env = _machine(tmp_path)
    home = tmp_path / "cursor-home"
    info = generate_cursor3_profile(tmp_path / "Cursor3", home, Cursor3Spec())
    write_agent_logs(
        tmp_path / "claude", tmp_path / "codex", AgentLogsSpec(now_ms=parse_iso_ms(NOW), days=5)
    )
    env.update(CODEBURN_CURSOR_DB=str(info.db_path), CODEBURN_CURSOR_HOME=str(home))
    _report(env)
    cache = Path(env["CODEBURN_CACHE_DIR"])
    not_derived = {"cursor-agent-first-seen.v1.json"}  # observations, not derivations
    derived = {
        p.name: p.read_bytes().replace(b": ", b":")
        for p in cache.iterdir()
        if p.is_file() and p.suffix == ".json" and p.name not in not_derived
    }
    with sqlite3.connect(cache / "tool-logs.v1.sqlite") as db:  # Claude Code's and Codex's
        assert db.execute("SELECT id FROM identity").fetchall() == [(IDENTITY,)]
    assert IDENTITY.endswith(RULES)
    assert set(derived) >= {
        "daily.v5.json",
        RESULTS_FILE,
        "cursor-agent-files.v4.json",
        "cursor-agent-memo.json",
    }
    for name, data in derived.items():
        assert f'"rules":"{RULES}"'.encode() in data, name


def test_a_memo_of_other_rules_is_no_memo() -> None:
    """The blob memo (written by the full parses that keep one) and the agent memo: their bytes
    carry the identity, and the same bytes under another identity are read as nothing."""
    blob = rows_bytes(memo_rows(BlobMemo()), "/db")
    other_blob = blob.replace(RULES.encode(), b"0" * len(RULES))
    assert read_blob_memo(blob, "/db") is not None and memo_head_ok(blob, "/db")
    assert read_blob_memo(other_blob, "/db") is None and not memo_head_ok(other_blob, "/db")
    agent = agent_memo_bytes({"j00": [[1]]})
    assert read_agent_memo(agent) == {"j00": [[1]]}
    assert read_agent_memo(agent.replace(RULES.encode(), b"0" * len(RULES))) is None
