"""Cursor's login: the access token in the global database and its (unverified) JWT claims."""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeburn.providers.sqlite_ro import CursorDbError, open_readonly

ACCESS_TOKEN_KEY = "cursorAuth/accessToken"
CACHED_EMAIL_KEY = "cursorAuth/cachedEmail"


@dataclass(frozen=True, slots=True)
class CursorToken:
    """The access token with the two claims we use. Never print it: repr hides the secrets."""

    token: str = field(repr=False)
    sub: str = field(repr=False)
    exp: int | None

    def expires_within(self, now_ms: int, margin_s: int) -> bool:
        """True when the token is expired, or expires within `margin_s` seconds of `now_ms`."""
        return self.exp is not None and self.exp * 1000 <= now_ms + margin_s * 1000

    def is_expired(self, now_ms: int) -> bool:
        return self.expires_within(now_ms, 0)


def decode_jwt_payload(token: str) -> dict[str, Any] | None:
    """The JWT's payload claims, without verifying the signature; None when it is not a JWT."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[1]:
        return None
    segment = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        payload = json.loads(base64.urlsafe_b64decode(segment.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def read_access_token(db_path: Path) -> str | None:
    """`cursorAuth/accessToken` from the global database's ItemTable, or None when absent."""
    return read_item(db_path, ACCESS_TOKEN_KEY)


def signed_in_email(db_path: Path) -> str | None:
    """The e-mail Cursor's login state caches (to pick one's rows of a team export)."""
    value = read_item(db_path, CACHED_EMAIL_KEY)
    return value if value and "@" in value else None


def read_item(db_path: Path, key: str) -> str | None:
    """A string value of the global database's ItemTable, or None when absent."""
    try:
        with open_readonly(db_path) as conn:
            row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (key,)).fetchone()
    except (CursorDbError, sqlite3.Error, OSError):  # OSError: e.g. a name too long to look up
        return None
    if row is None:
        return None
    value = row[0]
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        return None
    # VS Code's storage sometimes keeps strings JSON-quoted.
    value = value.strip()
    if value.startswith('"') and value.endswith('"'):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, str) and value else None


def token_from_string(token: str) -> CursorToken | None:
    """A CursorToken when `token` is a JWT with a string `sub`; None otherwise."""
    claims = decode_jwt_payload(token)
    if claims is None:
        return None
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        return None
    exp = claims.get("exp")
    if isinstance(exp, bool) or not isinstance(exp, int | float):
        exp = None
    return CursorToken(token=token, sub=sub, exp=int(exp) if exp is not None else None)


def load_token(db_path: Path) -> CursorToken | None:
    """Cursor's login on this machine, or None when signed out or the token is not a JWT."""
    raw = read_access_token(db_path)
    return token_from_string(raw) if raw else None


def has_access_token(db_path: Path) -> bool:
    """True when Cursor stores any access token (valid or not)."""
    return read_access_token(db_path) is not None
