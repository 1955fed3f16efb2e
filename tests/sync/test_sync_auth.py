"""Cursor's token → JWT claims → user id, account hash and cookie."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from codeburn.providers.ide.auth import (
    decode_jwt_payload,
    load_token,
    read_access_token,
    token_from_string,
)
from codeburn.sync.auth import account_of, credentials_for, session_cookie, user_id_from_sub
from tests.sync.fake_cursor import make_jwt, write_global_db


def test_decode_payload_without_verifying() -> None:
    token = make_jwt("auth0|user_sync_test", 2_000_000_000, email="x@example.com")
    claims = decode_jwt_payload(token)
    assert claims == {"sub": "auth0|user_sync_test", "exp": 2_000_000_000, "email": "x@example.com"}


@pytest.mark.parametrize(
    "text", ["", "abc", "a.b", "a.!!!.c", "a.bm90IGpzb24.c", "a." + "W10" + ".c", "a..c"]
)
def test_not_a_jwt_decodes_to_none(text: str) -> None:
    assert decode_jwt_payload(text) is None


@pytest.mark.parametrize(
    ("sub", "user_id"),
    [
        ("auth0|user_sync_test", "user_sync_test"),
        ("google-oauth2|user_01ABC", "user_01ABC"),
        ("user_plain", "user_plain"),
        ("github|user.x-1|", "user.x-1"),
        ("auth0|", "auth0"),
        ("auth0|bad id", None),
        ("auth0|a/b", None),
        ("|||", None),
        ("", None),
    ],
)
def test_user_id_is_last_non_empty_part(sub: str, user_id: str | None) -> None:
    assert user_id_from_sub(sub) == user_id


def test_account_is_sha256_prefix_of_sub() -> None:
    sub = "auth0|user_sync_test"
    assert account_of(sub) == hashlib.sha256(sub.encode()).hexdigest()[:16]
    assert len(account_of(sub)) == 16
    assert account_of(sub) != account_of("auth0|other")


def test_cookie_and_credentials_hide_secrets() -> None:
    token = make_jwt("auth0|user_sync_test", 2_000_000_000)
    assert session_cookie("user_sync_test", token) == (
        f"WorkosCursorSessionToken=user_sync_test%3A%3A{token}"
    )
    parsed = token_from_string(token)
    assert parsed is not None
    creds = credentials_for(parsed)
    assert creds is not None
    assert creds.cookie == f"WorkosCursorSessionToken=user_sync_test%3A%3A{token}"
    assert creds.exp == 2_000_000_000
    for text in (repr(parsed), repr(creds), str(creds)):
        assert token not in text
        assert "user_sync_test" not in text


def test_sub_without_user_id_gives_no_credentials() -> None:
    parsed = token_from_string(make_jwt("auth0|bad id", 2_000_000_000))
    assert parsed is not None
    assert credentials_for(parsed) is None


def test_token_read_from_item_table(tmp_path: Path) -> None:
    token = make_jwt(exp=2_000_000_000)
    db = write_global_db(tmp_path / "state.vscdb", token)
    assert read_access_token(db) == token
    loaded = load_token(db)
    assert loaded is not None
    assert (loaded.sub, loaded.exp) == ("auth0|user_sync_test", 2_000_000_000)


def test_json_quoted_token_is_unquoted(tmp_path: Path) -> None:
    token = make_jwt(exp=2_000_000_000)
    db = write_global_db(tmp_path / "state.vscdb", json.dumps(token))
    assert read_access_token(db) == token


def test_signed_out_missing_or_foreign_db_reads_none(tmp_path: Path) -> None:
    assert read_access_token(write_global_db(tmp_path / "a.vscdb", None)) is None
    assert read_access_token(tmp_path / "missing.vscdb") is None
    other = tmp_path / "other.vscdb"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    assert read_access_token(other) is None
    garbage = tmp_path / "garbage.vscdb"
    garbage.write_bytes(b"not a database at all" * 100)
    assert read_access_token(garbage) is None
    assert load_token(write_global_db(tmp_path / "b.vscdb", "opaque-token")) is None


def test_expiry_margin() -> None:
    parsed = token_from_string(make_jwt(exp=1_000))
    assert parsed is not None
    assert parsed.expires_within(940_000, 60) is True
    assert parsed.expires_within(939_999, 60) is False
    assert parsed.is_expired(1_000_000) is True
    assert parsed.is_expired(999_999) is False
    no_exp = token_from_string(make_jwt())
    assert no_exp is not None and no_exp.exp is None
    assert no_exp.expires_within(10**15, 60) is False
