"""Suite-wide Hypothesis profiles, and a guard: after every test has run, no file CodeBurn wrote
and no log line holds a Cursor secret (the access token, the cookie built from it, the user id)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.sync.fake_cursor import TEST_SUB, TEST_USER_ID, make_jwt

# Property tests: CI replays the same examples on every run (derandomized, no example database);
# locally the default profile keeps exploring and remembers failures in .hypothesis/. Neither has
# a deadline (no wall-clock limits in unit tests). `CODEBURN_HYPOTHESIS_PROFILE` picks one.
settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=100, deadline=None, print_blob=True
)
settings.register_profile("dev", deadline=None)
settings.load_profile(
    os.environ.get("CODEBURN_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

OUR_FOLDERS = {"cache", "config"}  # every test points CODEBURN_CACHE_DIR/CONFIG_DIR at these


def _needles() -> list[bytes]:
    jwt_header = make_jwt().split(".", 1)[0]  # every test token starts with it
    return [s.encode() for s in (jwt_header, TEST_SUB, TEST_USER_ID, "WorkosCursorSessionToken")]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception:
            self.lines.append(str(record.msg))


@pytest.fixture(scope="session", autouse=True)
def no_secret_anywhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    collect = _Collect()
    ours = logging.getLogger("codeburn")
    level = ours.level
    ours.setLevel(logging.DEBUG)
    logging.getLogger().addHandler(collect)
    yield
    logging.getLogger().removeHandler(collect)
    ours.setLevel(level)
    base = tmp_path_factory.getbasetemp()
    leaks = [
        f"{path.relative_to(base)} holds {needle.decode()!r}"
        for path in base.rglob("*")
        if path.is_file() and OUR_FOLDERS & set(path.relative_to(base).parts)
        for needle in _needles()
        if needle in path.read_bytes()
    ]
    leaks += [
        f"log line holds {needle.decode()!r}: {line[:120]}"
        for line in collect.lines
        for needle in _needles()
        if needle.decode() in line
    ]
    assert not leaks, "secrets leaked:\n" + "\n".join(leaks)


@pytest.fixture(autouse=True)
def no_real_cursor_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Transcripts and CLI sessions come only from what a test writes, never the real ~/.cursor."""
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "cursor-home"))
