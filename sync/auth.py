"""From Cursor's access token to the cursor.com session cookie and our account hash."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from codeburn.providers import CursorToken

_USER_ID = re.compile(r"[A-Za-z0-9._-]+")
_HEADER_SAFE = re.compile(r"[!-~]+")  # printable ASCII without spaces: what a Cookie can carry
COOKIE_NAME = "WorkosCursorSessionToken"


def user_id_from_sub(sub: str) -> str | None:
    """The last non-empty `|`-separated part of `sub`, when it is a plain identifier."""
    parts = [part for part in sub.split("|") if part]
    if not parts:
        return None
    candidate = parts[-1]
    return candidate if _USER_ID.fullmatch(candidate) else None


def account_of(sub: str) -> str:
    """First 16 hex digits of sha256(sub): the account tag we store instead of the sub."""
    return hashlib.sha256(sub.encode("utf-8")).hexdigest()[:16]


def session_cookie(user_id: str, access_token: str) -> str:
    """The Cookie header value cursor.com's dashboard expects (`::` URL-encoded)."""
    return f"{COOKIE_NAME}={user_id}%3A%3A{access_token}"


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a request to cursor.com needs. repr shows only the account hash and `exp`."""

    cookie: str = field(repr=False)
    account: str
    exp: int | None
    user_id: str = field(default="", repr=False)  # to pick one's events of a team account


def credentials_for(token: CursorToken) -> Credentials | None:
    """Credentials for a token, or None when its `sub` holds no usable user id or the token
    holds what no HTTP header can carry (a non-ASCII character, a space, a BLOB not UTF-8)."""
    user_id = user_id_from_sub(token.sub)
    if user_id is None or not _HEADER_SAFE.fullmatch(token.token):
        return None
    return Credentials(
        cookie=session_cookie(user_id, token.token),
        account=account_of(token.sub),
        exp=token.exp,
        user_id=user_id,
    )
