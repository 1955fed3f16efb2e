"""From Cursor's access token to the cursor.com session cookie and our account hash."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from codeburn.providers.cursor_auth import CursorToken

_USER_ID = re.compile(r"[A-Za-z0-9._-]+")
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
    """Credentials for a token, or None when its `sub` holds no usable user id."""
    user_id = user_id_from_sub(token.sub)
    if user_id is None:
        return None
    return Credentials(
        cookie=session_cookie(user_id, token.token),
        account=account_of(token.sub),
        exp=token.exp,
        user_id=user_id,
    )
