"""Odd environments and inputs for the command line (issue 20): one line, never a traceback."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeburn.server.cli import main
from tests.sync.fake_cursor import FakeCursor, SyncEnv, make_jwt, setup_sync_env


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SyncEnv]:
    with FakeCursor() as fake:
        yield setup_sync_env(tmp_path, monkeypatch, fake)


def _store_token(db: Path, value: str | bytes) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO ItemTable (key, value) VALUES ('cursorAuth/accessToken', ?)", (value,)
        )
    conn.close()


@pytest.mark.parametrize(
    "value",
    [
        make_jwt() + "é",  # a non-ASCII character in the signature
        make_jwt().replace(".", ".\u00a0", 1),  # … or a no-break space before the payload
        b"\xff\xfe" + make_jwt().encode(),  # a BLOB that is not UTF-8
    ],
    ids=["non-ascii", "nbsp", "non-utf8-blob"],
)
def test_unusable_login_token_is_the_login_message(
    env: SyncEnv, capsys: pytest.CaptureFixture[str], value: str | bytes
) -> None:
    _store_token(env.db_path, value)
    assert main(["import", "cursor", "--sync"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("codeburn import cursor: ") and err.count("\n") == 1, err
    assert "sign in" in err and "Traceback" not in err
    assert env.fake.requests == []  # nothing was sent with a header that cannot be sent
