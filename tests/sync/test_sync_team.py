"""A synced export with several people's rows: the signed-in person's only, never the sum."""

from __future__ import annotations

import json
import sqlite3

import pytest

from codeburn.cache.imports.store import store_path
from codeburn.providers.localtime import iso_utc
from codeburn.sync.cursor_sync import SyncError, maybe_sync
from tests.csv_fixtures import ExportRow
from tests.sync.fake_cursor import FIXED_NOW_MS, SyncEnv
from tests.sync.test_sync_json import event

HOUR = 3_600_000
NOW = FIXED_NOW_MS  # the clock for the whole test (the login token expires a week after it)
# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = [pytest.mark.usefixtures("fixed_clock"), pytest.mark.any_moment]


def _rows() -> list[ExportRow]:
    return [
        ExportRow(iso_utc(NOW - 3 * HOUR), "gpt-5", input=100, user="ana@example.com"),
        ExportRow(iso_utc(NOW - 2 * HOUR), "gpt-5", input=200, user="ben@example.com"),
        ExportRow(iso_utc(NOW - 1 * HOUR), "gpt-5", input=300, user="ana@example.com"),
    ]


def _sign_in_email(sync_env: SyncEnv, email: str) -> None:
    with sqlite3.connect(sync_env.db_path) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO ItemTable (key, value) VALUES ('cursorAuth/cachedEmail', ?)",
            (email,),
        )


def test_sync_keeps_the_signed_in_persons_rows(sync_env: SyncEnv) -> None:
    _sign_in_email(sync_env, "ana@example.com")
    sync_env.fake.variant, sync_env.fake.rows = "team", _rows()
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert outcome.summary is not None
    assert (outcome.summary["added"], outcome.summary["tokens"]) == (2, 400)
    stored = store_path().read_text()
    assert [e["input"] for e in json.loads(stored)["events"]] == [100, 300]
    assert "example.com" not in stored


def test_sync_of_several_people_without_the_signed_in_one_stores_nothing(
    sync_env: SyncEnv,
) -> None:
    sync_env.fake.variant, sync_env.fake.rows = "team", _rows()
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert (outcome.attempted, outcome.error_code) == (True, "export")
    assert not store_path().exists()


def test_sync_of_one_other_persons_rows_stores_nothing(sync_env: SyncEnv) -> None:
    """Filtered only when there were several people: one other person's rows were stored as
    the signed-in user's (issue 20, item 14)."""
    _sign_in_email(sync_env, "carl@example.com")
    sync_env.fake.variant = "team"
    sync_env.fake.rows = [r for r in _rows() if r.user == "ana@example.com"]
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert (outcome.attempted, outcome.error_code) == (True, "export")
    assert not store_path().exists()


# --- the JSON usage events: one rule with the team export (docs/cursor-sync.md) -----------------


def _owned(owner: str) -> list[dict[str, object]]:
    return [event(NOW - k * HOUR, inp=k, owner=owner) for k in (1, 2, 3)]


@pytest.mark.parametrize(
    ("owner", "email"),
    [
        ("other@example.com", "carl@example.com"),  # an e-mail, and the signed-in one is known
        ("user_someone_else", None),  # an id of the login's form (`user_sync_test`)
    ],
)
def test_events_all_owned_by_someone_else_are_never_stored(
    sync_env: SyncEnv, owner: str, email: str | None
) -> None:
    if email is not None:
        _sign_in_email(sync_env, email)
    sync_env.fake.events = _owned(owner)
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert (outcome.attempted, outcome.error_code) == (True, "export")
    with pytest.raises(SyncError, match="another person's"):
        maybe_sync(sync_env.db_path, force=True, now_ms=NOW + 1)
    assert not store_path().exists() and sync_env.fake.export_requests() == []


@pytest.mark.parametrize(
    ("owner", "email"),
    [
        ("carl@example.com", "Carl@Example.com"),  # the signed-in person (case aside)
        ("user_sync_test", None),  # the login's own id
        ("98765", "carl@example.com"),  # an id we cannot compare: the account's own, as `You`
        ("other@example.com", None),  # no e-mail to compare with: as a team export
    ],
)
def test_events_of_one_owner_we_cannot_tell_apart_are_kept(
    sync_env: SyncEnv, owner: str, email: str | None
) -> None:
    if email is not None:
        _sign_in_email(sync_env, email)
    sync_env.fake.events = _owned(owner)
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert outcome.summary is not None and outcome.summary["added"] == 3
    assert owner.casefold() not in store_path().read_text().casefold()


def test_the_same_other_person_as_a_team_export_is_refused_too(sync_env: SyncEnv) -> None:
    _sign_in_email(sync_env, "carl@example.com")
    sync_env.fake.variant = "team"
    sync_env.fake.rows = [
        ExportRow(iso_utc(NOW - k * HOUR), "gpt-5", input=k, user="other@example.com")
        for k in (1, 2, 3)
    ]
    with pytest.raises(SyncError, match="another person's") as caught:
        maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    assert "example.com" not in str(caught.value)  # e-mails are compared, never shown or kept
    assert not store_path().exists()
