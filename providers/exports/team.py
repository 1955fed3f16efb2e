"""Team exports: one person's rows out of an export that holds several people's.

A team export has a `User` column. Its figures are never summed into one person's spend: the
rows of the person asked for (`--user EMAIL`), else of the signed-in Cursor user (whenever the
cells are e-mails, even if they name one person only), else the import is refused with the list
to choose from. E-mails are compared, never stored or logged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeburn.providers.exports.usage_csv import CsvFormatError, UsageRow

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


class ChooseUserError(CsvFormatError):
    """A team export with several people and no way to tell which one is this user."""

    def __init__(self, message: str, users: Sequence[str]) -> None:
        super().__init__(message)
        self.users = tuple(users)


def users_of(rows: Sequence[UsageRow]) -> list[str]:
    """The distinct User cells of an export (case-insensitive), sorted."""
    found: dict[str, str] = {}
    for row in rows:
        if row.user:
            found.setdefault(row.user.casefold(), row.user)
    return sorted(found.values(), key=str.casefold)


def one_persons_rows(
    rows: Sequence[UsageRow], *, user: str | None = None, signed_in: str | None = None
) -> list[UsageRow]:
    """The rows of one person: `user` if given, else the signed-in e-mail, else the only user."""
    wanted = chosen_user(users_of(rows), user=user, signed_in=signed_in)
    if wanted is None:
        return list(rows)
    return [r for r in rows if r.user.casefold() == wanted]


def chosen_user(
    users: Sequence[str], *, user: str | None = None, signed_in: str | None = None
) -> str | None:
    """Whose rows of an export holding `users` (its distinct User cells, as `users_of` gives
    them) are imported: a casefolded User cell, or None for every row; ChooseUserError when
    that cannot be told or the one asked for has no row."""
    wanted = (user or "").strip().casefold()
    present = {name.casefold() for name in users}
    if wanted:
        if not users:
            return None  # a personal export: every row is this person's
        if wanted not in present:
            raise ChooseUserError(
                f"--user {user.strip() if user else ''} has no rows in this export; "
                f"it holds: {', '.join(users)}",
                users,
            )
        return wanted
    me = (signed_in or "").strip().casefold()
    if me and users and all(map(is_email, users)):
        # Whose export it is we know only when its cells are e-mails (a personal one says `You`).
        if me in present:
            return me
        raise ChooseUserError(
            f"no row of this team export is the signed-in Cursor user's; it holds the usage of "
            f"{', '.join(users)}: choose with --user EMAIL, nothing was imported",
            users,
        )
    if len(users) <= 1:
        return None
    raise ChooseUserError(
        f"this team export holds the usage of {len(users)} people ({', '.join(users)}); "
        "choose yours with --user EMAIL, nothing was imported",
        users,
    )


def is_email(cell: str) -> bool:
    """`name@example.com`, not the `You` of a personal export."""
    return _EMAIL.fullmatch(cell) is not None
