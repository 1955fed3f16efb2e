"""The sync's view of the import store and the parsers (owned by cache/ and providers/)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from codeburn.cache import ImportStoreError, ImportSummary, apply_sync, store_fingerprint
from codeburn.cache import newest_synced_ms as stored_newest_synced_ms
from codeburn.cache import other_accounts_coverage_end as stored_others_coverage_end
from codeburn.providers import (
    ChooseUserError,
    CsvFormatError,
    EventShapeError,
    one_persons_events,
    one_persons_rows,
    parse_csv,
    parse_events,
)

NOT_ONE_PERSON = (
    "the usage events hold another person's or several people's usage and none of it is the "
    "signed-in Cursor user's; nothing was stored"
)


class NotAnExport(Exception):
    """The body cursor.com sent is not a usage export (its text is never kept)."""


class NotEvents(Exception):
    """The JSON usage events hold an event we cannot read: the sync falls back to the export."""


class NotOnePerson(Exception):
    """A team account's events of several people, none the signed-in one: nothing is stored."""


class StoreUnreadable(Exception):
    """The store exists but cannot be read; the message carries the fix."""


def store_exists() -> bool:
    return store_fingerprint() is not None


def newest_synced_ms(account: str) -> int | None:
    try:
        return stored_newest_synced_ms(account)
    except ImportStoreError as exc:
        raise StoreUnreadable(str(exc)) from None


def other_accounts_coverage_end(account: str) -> int | None:
    try:
        return stored_others_coverage_end(account)
    except ImportStoreError as exc:
        raise StoreUnreadable(str(exc)) from None


def apply_export(
    body: bytes,
    account: str,
    window_start_ms: int,
    window_end_ms: int,
    *,
    signed_in: str | None = None,
) -> ImportSummary:
    """Parse the whole body first, then store it: a bad body leaves the store byte-identical.

    An export holding several people's rows keeps the signed-in person's; when that person is
    not among them nothing is stored (never several people summed into one spend)."""
    try:
        rows = one_persons_rows(parse_csv(body), signed_in=signed_in)
    except ChooseUserError:  # its text names the people: never kept, the same words as JSON's
        raise NotOnePerson(NOT_ONE_PERSON) from None
    except CsvFormatError:
        raise NotAnExport from None
    try:
        return apply_sync(rows, account, window_start_ms, window_end_ms)
    except ImportStoreError as exc:
        raise StoreUnreadable(str(exc)) from None


def apply_events(
    items: Sequence[Any],
    account: str,
    window_start_ms: int,
    window_end_ms: int,
    *,
    user_ids: Iterable[str] = (),
    merge: bool = False,
) -> ImportSummary:
    """Store the JSON usage events of one sync, all read first (a bad one stores nothing).

    `user_ids` (the login's user id and e-mail) pick the signed-in person's events when the
    events carry several `owningUser` values; when none is theirs nothing is stored. `merge`:
    an incomplete read, which adds and updates but never removes a stored event."""
    try:
        events = parse_events(items)
    except EventShapeError:
        raise NotEvents from None
    mine = one_persons_events(events, user_ids=user_ids)
    if mine is None:
        raise NotOnePerson(NOT_ONE_PERSON)
    rows = [e.row for e in mine]
    details = {e.row.hash: e.detail for e in mine}
    try:
        return apply_sync(
            rows, account, window_start_ms, window_end_ms, details=details, merge=merge
        )
    except ImportStoreError as exc:
        raise StoreUnreadable(str(exc)) from None
