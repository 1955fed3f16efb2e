"""Automatic and forced sync of Cursor's usage from cursor.com into the import store.

Order of a sync: token → off switch → throttle/backoff (claimed under the state lock, before the
request) → window → the JSON usage events, page by page (or, when cursor.com has none or sends a
shape we do not know, once the usage export) → parse + store → state. Nothing here logs or
stores a secret.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeburn.cache import LockTimeoutError, cursor_sync_enabled, folder_problem, imports_dir
from codeburn.providers import (
    DAY,
    CodeBurnError,
    CursorToken,
    load_token,
    local_day,
    local_midnight_ms,
    signed_in_email,
)
from codeburn.providers import now_ms as clock_ms
from codeburn.sync import store_bridge
from codeburn.sync.auth import Credentials, credentials_for
from codeburn.sync.flight import Flights
from codeburn.sync.state import ErrorCode, Source, SyncState, load_state, update_state

if TYPE_CHECKING:
    from codeburn.sync.client import RequestFailed

log = logging.getLogger(__name__)

SECOND_MS = 1000
MINUTE_MS = 60 * SECOND_MS
HOUR_MS = 60 * MINUTE_MS
THROTTLE_MS = HOUR_MS
JITTER_MAX_MS = 5 * MINUTE_MS
LOGIN_BACKOFF_MS = 6 * HOUR_MS
FAILURES_BACKOFF_MS = 6 * HOUR_MS
FAILURES_LIMIT = 3
RETRY_AFTER_MIN_S = 60
RETRY_AFTER_DEFAULT_S = 300
RETRY_AFTER_MAX_S = 24 * 3600
EXPIRY_MARGIN_S = 60
FIRST_BUDGET_S = 45.0
LATER_BUDGET_S = 15.0
BACKFILL_DAYS = 30
QUICK_LOOKBACK_MS = 15 * MINUTE_MS  # a quick sync reads from this long before the newest event
INTERVAL_SLACK_MS = 30 * SECOND_MS  # the editor's timer may fire a little early
# An attempt this little after a sync's `now` was claimed by another sync meanwhile (its clock
# read later), not left by a clock that went back.
CLOCK_SLACK_MS = 60 * SECOND_MS

NOT_SIGNED_IN = "Cursor is not signed in on this machine; open Cursor and sign in, then try again"
LOGIN_EXPIRED = "Cursor login expired, open Cursor to sign in again"
BUSY = "another CodeBurn process is syncing right now; try again in a moment"


class SyncError(CodeBurnError):
    """A forced sync failed; the message is ours, one line, and fit to show a person."""


@dataclass(frozen=True, slots=True)
class SyncOutcome:
    """What one `maybe_sync` call did."""

    attempted: bool
    changed: bool = False
    summary: dict[str, Any] | None = None
    error_code: ErrorCode | None = None
    covered_days: tuple[date, date] | None = None


# The automatic sync in flight in this process (at most one), which a forced sync joins.
_flights: Flights[SyncOutcome] = Flights()
JOIN_SLACK_S = 5.0


def _joined_flight() -> SyncOutcome | None:
    """The outcome of the automatic sync in flight, waited for; None when there is none, or it
    ended without an answer of cursor.com to give (then the forced sync makes its own)."""
    flight = _flights.joined(FIRST_BUDGET_S + JOIN_SLACK_S)
    outcome = flight.outcome if flight is not None else None
    if outcome is None or not outcome.attempted:
        return None
    if outcome.error_code is not None:
        raise SyncError(load_state().last_error or "the sync in progress failed; try again")
    return outcome if outcome.summary is not None else None


@dataclass(frozen=True, slots=True)
class Window:
    start_ms: int
    end_ms: int
    first: bool


def maybe_sync(
    db_path: Path,
    *,
    force: bool = False,
    now_ms: int | None = None,
    budget_s: float | None = None,
    interval_ms: int | None = None,
) -> SyncOutcome:
    """Sync when due (automatic) or now (`force`).

    `interval_ms` (the language server's `codeburn.cursorSync.intervalMinutes`): while the JSON
    events serve the account, an automatic sync is due that long after the last attempt instead
    of hourly, and reads only from 15 minutes before the newest synced event (a quick sync),
    except the first sync after each full local hour, which is a full one.

    Automatic: never raises for login, HTTP or network trouble; the outcome says what happened.
    Forced: ignores throttle, backoff and the off switch, and raises SyncError on any failure;
    while an automatic sync of this process is making its requests, it joins that one.
    `budget_s` overrides the 45 s / 15 s time budget (tests).
    """
    if force:
        joined = _joined_flight()
        if joined is not None:
            return joined
    now = clock_ms() if now_ms is None else now_ms
    if not force and not cursor_sync_enabled():
        return SyncOutcome(attempted=False)  # off: not even Cursor's login is read
    credentials = _usable_credentials(db_path, now, force)
    if credentials is None:
        return SyncOutcome(attempted=False, error_code="login")
    unusable = folder_problem(imports_dir())  # logged once; nothing fetched that cannot be kept
    if unusable is not None:
        if force:
            raise SyncError(f"nothing was synced: {unusable}")
        return SyncOutcome(attempted=False)
    schedule = _Schedule(interval_ms)
    if not force and not schedule.due(load_state(), credentials, now):
        return SyncOutcome(attempted=False)  # the common case; _claim_attempt checks it again
    # The client (httpx) only once a request may follow: a status that syncs nothing stays fast.
    from codeburn.sync.client import BaseUrlError, base_url  # noqa: PLC0415

    try:
        base = base_url()
    except BaseUrlError as exc:
        if force:
            raise SyncError(str(exc)) from None
        log.warning("cursor.com sync skipped: %s", exc)
        return SyncOutcome(attempted=False, error_code="network")
    if force:
        try:
            _claim_attempt(credentials, now, force)
        except LockTimeoutError:
            raise SyncError(BUSY) from None
        return _run(_Run(credentials, base, now, force, budget_s, signed_in_email(db_path), False))
    # In flight from before the claim: a forced sync arriving after it joins, never runs beside.
    with _flights.flying() as flight:
        try:
            quick = _claim_attempt(credentials, now, force, schedule)
        except LockTimeoutError:
            quick = None
        if quick is None:
            flight.outcome = SyncOutcome(attempted=False)
        else:
            email = signed_in_email(db_path)
            flight.outcome = _run(_Run(credentials, base, now, force, budget_s, email, quick))
        return flight.outcome


def _usable_credentials(db_path: Path, now: int, force: bool) -> Credentials | None:
    token: CursorToken | None = load_token(db_path)
    if token is None:
        if force:
            raise SyncError(NOT_SIGNED_IN)
        return None
    credentials = credentials_for(token)
    if credentials is None or token.expires_within(now, EXPIRY_MARGIN_S):
        if force:
            raise SyncError(LOGIN_EXPIRED)
        return None
    return credentials


def is_due(state: SyncState, credentials: Credentials, now: int) -> bool:
    """Whether an automatic sync may make a request now."""
    if _backing_off(state, credentials, now):
        return False
    if _login_replaced(state, credentials):
        return True
    nxt = state.next_attempt_ms
    # A next attempt further away than the throttle allows means the clock went back.
    furthest = now + THROTTLE_MS + JITTER_MAX_MS + CLOCK_SLACK_MS
    return not (nxt is not None and now < nxt <= furthest)


def _login_replaced(state: SyncState, credentials: Credentials) -> bool:
    """The login cursor.com rejected has been replaced."""
    return (
        state.error_code == "login"
        and state.rejected_exp is not None
        and state.rejected_exp != credentials.exp
    )


def _backing_off(state: SyncState, credentials: Credentials, now: int) -> bool:
    """A back-off holds (a replaced login ends it; one further away than 24 h is a clock that
    went back)."""
    if _login_replaced(state, credentials):
        return False
    backoff = state.backoff_until_ms
    return backoff is not None and now < backoff <= now + RETRY_AFTER_MAX_S * SECOND_MS


def _local_hour(ms: int) -> tuple[int, int, int, int]:
    return time.localtime(ms / 1000)[:4]


@dataclass(frozen=True, slots=True)
class _Schedule:
    """When an automatic sync is due: hourly, or every `interval_ms` in the editor."""

    interval_ms: int | None = None

    def editor(self, state: SyncState) -> bool:
        """The editor's schedule applies while the JSON events serve the account."""
        return self.interval_ms is not None and state.source == "json"

    def due(self, state: SyncState, credentials: Credentials, now: int) -> bool:
        if not self.editor(state) or self.interval_ms is None:
            return is_due(state, credentials, now)
        if _backing_off(state, credentials, now):
            return False
        last = state.last_attempt_ms
        # A last attempt after now means the clock went back.
        return (
            last is None
            or not now - self.interval_ms + INTERVAL_SLACK_MS < last <= now + CLOCK_SLACK_MS
        )

    def quick(self, state: SyncState, account: str, now: int) -> bool:
        """A quick sync, unless this is the first sync after a full local hour (or the first)."""
        last = state.last_attempt_ms
        return (
            self.editor(state)
            and last is not None
            and last <= now
            and _local_hour(last) == _local_hour(now)
            and state.through.get(account) is not None
        )


def _claim_attempt(
    credentials: Credentials, now: int, force: bool, schedule: _Schedule | None = None
) -> bool | None:
    """Record the attempt (and the next allowed one) before any request is made; None when no
    sync is due, else whether it is a quick one."""
    schedule = schedule or _Schedule()
    if not force and not schedule.due(load_state(), credentials, now):
        return None  # the common case: no lock, no write
    with update_state() as state:
        if not force and not schedule.due(state, credentials, now):
            return None
        quick = not force and schedule.quick(state, credentials.account, now)
        state.last_attempt_ms = now
        state.account = credentials.account
        state.next_attempt_ms = now + THROTTLE_MS + random.randint(0, JITTER_MAX_MS)
        return quick


def first_window_start(now: int) -> int:
    """Local midnight of the earlier of the 1st of this month and 30 days ago."""
    today = local_day(now)
    return local_midnight_ms(min(today.replace(day=1), today - DAY * BACKFILL_DAYS))


def sync_window(account: str, state: SyncState, now: int) -> Window:
    """The export window for `account` (docs/cursor-sync.md#window, #accounts-and-sources)."""
    marks = [store_bridge.newest_synced_ms(account), state.through.get(account)]
    # A mark after now comes from a future-dated row stored before such rows were refused.
    known = [min(mark, now) for mark in marks if mark is not None]
    if store_bridge.store_exists() and known:
        start = local_midnight_ms(local_day(max(known)) - DAY)
        return Window(min(start, now), now, first=False)
    start = first_window_start(now)
    others_end = store_bridge.other_accounts_coverage_end(account)
    if others_end is not None:
        start = max(start, others_end + 1)
    return Window(min(start, now), now, first=True)


def quick_window(account: str, state: SyncState, now: int) -> Window | None:
    """15 minutes before the newest synced event of `account` to now; None when there is none
    (then the sync is a full one)."""
    marks = [store_bridge.newest_synced_ms(account), state.through.get(account)]
    known = [min(mark, now) for mark in marks if mark is not None]
    if not store_bridge.store_exists() or not known:
        return None
    return Window(max(0, max(known) - QUICK_LOOKBACK_MS), now, first=False)


@dataclass(frozen=True, slots=True)
class _Run:
    credentials: Credentials
    base: str
    now: int
    force: bool
    budget_s: float | None
    signed_in: str | None
    quick: bool = False


def _run(run: _Run) -> SyncOutcome:
    credentials, base, now, force = run.credentials, run.base, run.now, run.force
    budget_s, signed_in = run.budget_s, run.signed_in
    try:
        state = load_state()
        window = quick_window(credentials.account, state, now) if run.quick else None
        if window is None:
            window = sync_window(credentials.account, state, now)
    except store_bridge.StoreUnreadable as exc:
        return _store_trouble(exc, force)
    budget = (
        budget_s if budget_s is not None else (FIRST_BUDGET_S if window.first else LATER_BUDGET_S)
    )
    from codeburn.sync.client import CursorClient, EventsUnavailable, RequestFailed  # noqa: PLC0415

    client = CursorClient(credentials, base=base)
    deadline = time.monotonic() + budget  # one budget for every request of this sync
    source: Source = "json"
    incomplete: tuple[int, int] | None = None
    try:
        try:
            read = client.usage_events(
                window.start_ms, window.end_ms, budget_s=budget, deadline=deadline
            )
            if not read.complete:
                incomplete = (len(read.items), read.count)
            # An incomplete read merges: an event it did not bring may just not have been served.
            summary = store_bridge.apply_events(
                read.items,
                credentials.account,
                window.start_ms,
                window.end_ms,
                user_ids=(credentials.user_id, signed_in or ""),
                merge=incomplete is not None,
            )
        except (EventsUnavailable, store_bridge.NotEvents):
            source, incomplete = "csv", None  # no JSON events, or an unknown shape: the export
            body = client.export_csv(
                window.start_ms, window.end_ms, budget_s=budget, deadline=deadline
            )
            summary = store_bridge.apply_export(
                body, credentials.account, window.start_ms, window.end_ms, signed_in=signed_in
            )
    except RequestFailed as exc:
        return _failed(exc, credentials, now, force)
    except store_bridge.NotAnExport:
        failure = RequestFailed("export", "cursor.com did not return a usage export")
        return _failed(failure, credentials, now, force)
    except store_bridge.NotOnePerson as exc:
        return _failed(RequestFailed("export", str(exc)), credentials, now, force)
    except store_bridge.StoreUnreadable as exc:
        return _store_trouble(exc, force)
    # A window is known to be empty only when cursor.com counted nothing in it.
    empty = summary.empty is True and incomplete is None
    _record_success(credentials.account, empty, now, source, incomplete)
    log.info(
        "cursor.com sync (%s%s): %d new, %d already stored",
        source, ", quick" if run.quick else "", summary.added, summary.skipped,
    )  # fmt: skip
    if incomplete is not None:
        log.warning(
            "cursor.com sync (json): served %d of the %d usage events it counted; "
            "merged them, nothing stored was removed",
            *incomplete,
        )
    days = (
        (summary.first_day, summary.last_day)
        if summary.first_day is not None and summary.last_day is not None
        else None
    )
    result = summary.to_json()
    if incomplete is not None:
        result["empty"] = False
        result["incomplete"] = {"served": incomplete[0], "count": incomplete[1]}
    return SyncOutcome(attempted=True, changed=summary.changed, summary=result, covered_days=days)


def _store_trouble(exc: Exception, force: bool) -> SyncOutcome:
    # The store is the user's data: never replace it; say how to fix it.
    if force:
        raise SyncError(str(exc)) from None
    log.warning("cursor.com sync skipped: %s", exc)
    return SyncOutcome(attempted=True)


def _error_code(failure: RequestFailed) -> ErrorCode:
    if failure.kind == "login":
        return "login"
    if failure.kind == "export":
        return "export"
    return "network"


def _person_message(failure: RequestFailed) -> str:
    if failure.kind == "login":
        return f"{failure}; open Cursor to sign in again"
    if failure.kind == "rate-limited":
        return f"{failure}; try again in a few minutes"
    if failure.kind == "network":
        return f"{failure}; check the connection and try again"
    return f"{failure}; try again later"


def _failed(failure: RequestFailed, credentials: Credentials, now: int, force: bool) -> SyncOutcome:
    message = _person_message(failure)
    code = _error_code(failure)
    try:
        with update_state() as state:
            _apply_failure(state, failure, credentials, now, message)
    except LockTimeoutError:
        log.warning("cursor.com sync: could not record the failure (state file busy)")
    log.warning("cursor.com sync failed: %s", message)
    if force:
        raise SyncError(message)
    return SyncOutcome(attempted=True, error_code=code)


def _apply_failure(
    state: SyncState, failure: RequestFailed, credentials: Credentials, now: int, message: str
) -> None:
    state.failures += 1
    state.last_error = message
    state.error_code = _error_code(failure)
    backoff_ms = 0
    if failure.kind == "login":
        backoff_ms = LOGIN_BACKOFF_MS
        state.rejected_exp = credentials.exp
    elif failure.kind == "rate-limited":
        wait_s = (
            failure.retry_after_s if failure.retry_after_s is not None else RETRY_AFTER_DEFAULT_S
        )
        backoff_ms = int(min(max(wait_s, RETRY_AFTER_MIN_S), RETRY_AFTER_MAX_S) * SECOND_MS)
    if state.failures >= FAILURES_LIMIT:
        backoff_ms = max(backoff_ms, FAILURES_BACKOFF_MS)
    if backoff_ms:
        state.backoff_until_ms = max(state.backoff_until_ms or 0, now + backoff_ms)


def _record_success(
    account: str, empty: bool, now: int, source: Source, incomplete: tuple[int, int] | None
) -> None:
    try:
        newest = store_bridge.newest_synced_ms(account)
    except store_bridge.StoreUnreadable:
        newest = None
    marks = [mark for mark in (newest,) if mark is not None]
    if empty:
        marks.append(local_midnight_ms(local_day(now)))
    try:
        with update_state() as state:
            state.failures = 0
            state.backoff_until_ms = None
            state.last_error = None
            state.error_code = None
            state.rejected_exp = None
            state.last_success_ms = now
            state.account = account
            state.source = source
            state.incomplete = incomplete
            state.exact_through_ms = min(newest, now) if newest is not None else None
            if marks:
                earlier = min(state.through.get(account, 0), now)
                state.through[account] = min(max([*marks, earlier]), now)
    except LockTimeoutError:
        log.warning("cursor.com sync: could not record the success (state file busy)")
