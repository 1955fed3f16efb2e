"""The sync's view of the import store and the CSV parser (both owned by cache/ and providers/)."""

from __future__ import annotations

from codeburn.cache import ImportStoreError, ImportSummary, apply_sync, store_fingerprint
from codeburn.cache import newest_synced_ms as stored_newest_synced_ms
from codeburn.cache import other_accounts_coverage_end as stored_others_coverage_end
from codeburn.providers import CsvFormatError, one_persons_rows, parse_csv


class NotAnExport(Exception):
    """The body cursor.com sent is not a usage export (its text is never kept)."""


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
    except CsvFormatError:  # ChooseUserError included
        raise NotAnExport from None
    try:
        return apply_sync(rows, account, window_start_ms, window_end_ms)
    except ImportStoreError as exc:
        raise StoreUnreadable(str(exc)) from None
