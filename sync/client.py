"""The cursor.com calls we make: the usage events (JSON, paged), the usage export (CSV) and the
usage summary (JSON).

Errors carry our own words only; a response body is never put into a message or a log.
"""

from __future__ import annotations

import ipaddress
import json
import os
import threading
import time
import zlib
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import httpx

from codeburn.providers import CodeBurnError
from codeburn.providers import now_ms as clock_ms
from codeburn.sync.auth import Credentials

DEFAULT_BASE_URL = "https://cursor.com"
BASE_URL_ENV = "CODEBURN_CURSOR_BASE_URL"
ORIGIN = "https://cursor.com"
EXPORT_PATH = "/api/dashboard/export-usage-events-csv"
SUMMARY_PATH = "/api/usage-summary"
EVENTS_PATH = "/api/dashboard/get-filtered-usage-events"
EVENTS_PAGE_SIZE = 500
MAX_EVENT_PAGES = 400  # 200,000 events in one window: far beyond a month of heavy use
USER_AGENT = "codeburn"
MAX_BODY_BYTES = 256 * 1024 * 1024  # the CSV export of a window
# What one page of JSON events may cost, counted after decompression and checked before parsing:
# a real page of 500 events is ~0.5 MB, while json.loads of 100 MB of empty events peaks at
# ~2.6 GB. A page with more objects than its events could hold is refused unparsed as well.
MAX_EVENTS_PAGE_BYTES = 8 * 1024 * 1024
MAX_OBJECTS_PER_EVENT = 64
MAX_SUMMARY_BYTES = 4 * 1024 * 1024
SUMMARY_BUDGET_S = 10.0
_CHUNK = 64 * 1024

FailureKind = Literal["login", "rate-limited", "server", "network", "export"]


class BaseUrlError(CodeBurnError, ValueError):
    """CODEBURN_CURSOR_BASE_URL is not something we may send the login cookie to."""


class RequestFailed(Exception):
    """A cursor.com request did not give us a usable answer; `kind` says which way."""

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.status = status
        self.retry_after_s = retry_after_s


class EventsUnavailable(Exception):
    """The JSON usage events are not there (HTTP 404/405) or came in a shape we do not know:
    the sync falls back to the usage export (CSV). The answer's text is never kept."""


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def base_url() -> str:
    """https://cursor.com, or the env override; plain http only to a loopback host."""
    raw = os.environ.get(BASE_URL_ENV, "").strip()
    if not raw:
        return DEFAULT_BASE_URL
    try:
        url = httpx.URL(raw)
    except httpx.InvalidURL as exc:
        raise BaseUrlError(f"{BASE_URL_ENV} is not a URL") from exc
    if url.scheme == "https" and url.host:
        return raw.rstrip("/")
    if url.scheme == "http" and url.host and _is_loopback(url.host):
        return raw.rstrip("/")
    raise BaseUrlError(f"{BASE_URL_ENV} must be an https:// URL (plain http only for loopback)")


def parse_retry_after(value: str | None, now_s: float | None = None) -> float | None:
    """Seconds from a Retry-After header (delta seconds or an HTTP date); None when absent."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # str.isdigit() also takes "²" and "٣"
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (clock_ms() / 1000 if now_s is None else now_s))


def _status_failure(response: httpx.Response, what: str) -> RequestFailed:
    status = response.status_code
    if status in (401, 403):
        return RequestFailed(
            "login", f"cursor.com refused the Cursor login (HTTP {status})", status=status
        )
    if status == 429:
        retry = parse_retry_after(response.headers.get("Retry-After"))
        return RequestFailed(
            "rate-limited",
            "cursor.com asked us to slow down (HTTP 429)",
            status=status,
            retry_after_s=retry,
        )
    if status >= 500:
        return RequestFailed(
            "server", f"cursor.com had a server error (HTTP {status})", status=status
        )
    return RequestFailed(
        "export", f"cursor.com did not return {what} (HTTP {status})", status=status
    )


@dataclass(frozen=True, slots=True)
class _Request:
    path: str
    params: dict[str, str]
    accept: str
    deadline: float
    budget_s: float
    what: str
    body: dict[str, Any] | None = None  # a JSON body: POST instead of GET
    limit: int = MAX_BODY_BYTES  # the most the answer may hold, decompressed


@dataclass(frozen=True, slots=True)
class EventsRead:
    """The events one sync read and the count cursor.com gave for its window."""

    items: list[Any]
    count: int

    @property
    def complete(self) -> bool:
        return len(self.items) >= self.count


@dataclass(slots=True)
class _Outcome:
    body: bytes | None = None
    error: BaseException | None = None


class CursorClient:
    """A short-lived client for one account's cookie. `transport` is for tests only."""

    def __init__(
        self,
        credentials: Credentials,
        *,
        base: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._credentials = credentials
        self._base = base if base is not None else base_url()
        self._transport = transport

    @property
    def base(self) -> str:
        return self._base

    def export_csv(
        self, start_ms: int, end_ms: int, *, budget_s: float, deadline: float | None = None
    ) -> bytes:
        """The usage export for [start_ms, end_ms]; raises RequestFailed. Never exceeds budget_s
        (or `deadline`, a time.monotonic() the budget of a whole sync ends at)."""
        params = {"startDate": str(start_ms), "endDate": str(end_ms), "strategy": "tokens"}
        return self._get(
            EXPORT_PATH, params, "text/csv", budget_s, "the usage export", deadline=deadline
        )

    def usage_events(
        self,
        start_ms: int,
        end_ms: int,
        *,
        budget_s: float,
        deadline: float | None = None,
        page_size: int | None = None,
    ) -> EventsRead:
        """The JSON usage events of [start_ms, end_ms], page after page within one budget.

        Pages are asked until the count is reached: a short page is not the end (Cursor serves
        fewer than asked, or leaves events out of a page). An empty page or the page bound ends
        the read early; the result then says it is incomplete (the store merges it).

        Raises EventsUnavailable (fall back to the CSV export) for HTTP 404/405 or an answer of
        unknown shape, RequestFailed for every other failure: HTTP and network trouble as for the
        export, and ("export") a page larger than asked or a count that changes between pages."""
        if deadline is None:
            deadline = time.monotonic() + budget_s
        if page_size is None:
            page_size = EVENTS_PAGE_SIZE
        events: list[Any] = []
        total = 0
        for page in range(1, MAX_EVENT_PAGES + 1):
            body = {
                "teamId": 0,
                "startDate": str(start_ms),
                "endDate": str(end_ms),
                "page": page,
                "pageSize": page_size,
            }
            raw = self._get(
                EVENTS_PATH, {}, "application/json", budget_s, "the usage events",
                body=body, deadline=deadline, limit=MAX_EVENTS_PAGE_BYTES,
            )  # fmt: skip
            if raw.count(b"{") > (page_size + 1) * MAX_OBJECTS_PER_EVENT:
                raise RequestFailed("export", "the answer from cursor.com was too large")
            count, items = _events_page(raw)
            if page == 1:
                if items is None and count:
                    raise EventsUnavailable  # a count of events but no events
                total = count or 0
                if total > MAX_EVENT_PAGES * page_size:
                    raise RequestFailed(
                        "export",
                        f"cursor.com reported {total} usage events, more than one sync reads",
                    )
            elif count is None:
                raise EventsUnavailable
            elif count != total:
                raise RequestFailed(
                    "export", "the usage events changed while they were read; nothing was stored"
                )
            items = items or []
            if len(items) > page_size or len(events) + len(items) > total:
                raise RequestFailed(
                    "export", "cursor.com sent more usage events than asked for; nothing was stored"
                )
            events.extend(items)
            if len(events) >= total or not items:
                break  # the count is reached, or an empty page: nothing more will come
        return EventsRead(events, total)

    def usage_summary(self, *, budget_s: float = SUMMARY_BUDGET_S) -> Any:
        """The parsed usage-summary JSON; raises RequestFailed."""
        body = self._get(
            SUMMARY_PATH, {}, "application/json", budget_s, "the usage summary",
            limit=MAX_SUMMARY_BYTES,
        )  # fmt: skip
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise RequestFailed("export", "cursor.com did not return the usage summary") from exc

    def _get(
        self,
        path: str,
        params: dict[str, str],
        accept: str,
        budget_s: float,
        what: str,
        *,
        body: dict[str, Any] | None = None,
        deadline: float | None = None,
        limit: int = MAX_BODY_BYTES,
    ) -> bytes:
        # The request runs on a worker thread so that a server stalling mid-body cannot hold
        # the caller past the budget; the abandoned worker dies at its own read timeout.
        outcome = _Outcome()
        until = time.monotonic() + budget_s if deadline is None else deadline
        request = _Request(path, params, accept, until, budget_s, what, body, limit)
        worker = threading.Thread(
            target=self._fetch,
            args=(request, outcome),
            name="codeburn-cursor-request",
            daemon=True,
        )
        worker.start()
        worker.join(max(0.0, until - time.monotonic()))
        if worker.is_alive():
            raise RequestFailed("network", f"cursor.com did not answer within {budget_s:g} s")
        if outcome.error is not None:
            if isinstance(outcome.error, RequestFailed | EventsUnavailable):
                raise outcome.error
            raise RequestFailed("network", "could not reach cursor.com") from None
        assert outcome.body is not None
        return outcome.body

    def _headers(self, accept: str) -> dict[str, str]:
        return {
            "Cookie": self._credentials.cookie,
            "Origin": ORIGIN,
            "Accept": accept,
            "Accept-Encoding": "gzip",  # decompressed here, within the answer's limit
            "User-Agent": USER_AGENT,
        }

    def _fetch(self, request: _Request, outcome: _Outcome) -> None:
        remaining = request.deadline - time.monotonic()
        too_slow = f"cursor.com did not answer within {request.budget_s:g} s"
        if remaining <= 0:
            outcome.error = RequestFailed("network", too_slow)
            return
        remaining = max(0.1, remaining)
        timeout = httpx.Timeout(remaining, connect=min(remaining, 10.0))
        loopback = _is_loopback(httpx.URL(self._base).host)
        try:
            with (
                httpx.Client(
                    timeout=timeout,
                    transport=self._transport,
                    trust_env=not loopback,
                    follow_redirects=False,
                ) as client,
                client.stream(
                    "GET" if request.body is None else "POST",
                    self._base + request.path,
                    params=request.params,
                    headers=self._headers(request.accept),
                    json=request.body,
                ) as response,
            ):
                if request.body is not None and (
                    response.status_code in (404, 405) or 200 < response.status_code < 300
                ):
                    raise EventsUnavailable  # no such endpoint here, or an answer we do not know
                if response.status_code != 200:
                    raise _status_failure(response, request.what)
                outcome.body = _read_body(response, request, too_slow)
        except (RequestFailed, EventsUnavailable) as exc:
            outcome.error = exc
        except httpx.TimeoutException:
            outcome.error = RequestFailed("network", too_slow)
        except (httpx.HTTPError, OSError):
            outcome.error = RequestFailed("network", "could not reach cursor.com")


def _read_body(response: httpx.Response, request: _Request, too_slow: str) -> bytes:
    """The answer's bytes, decompressed here (never by httpx, which inflates a whole received
    chunk at once: 64 KB of a gzip bomb are 64 MB) and counted against `request.limit` as they
    come; an answer declared larger than the limit is refused before it is read."""
    too_large = RequestFailed("export", "the answer from cursor.com was too large")
    encoding = response.headers.get("Content-Encoding", "").strip().lower()
    if encoding not in ("", "identity", "gzip", "x-gzip"):
        raise RequestFailed("export", "cursor.com sent its answer in an encoding we do not read")
    declared = response.headers.get("Content-Length", "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > request.limit:
        raise too_large
    inflater = zlib.decompressobj(wbits=31) if encoding in ("gzip", "x-gzip") else None
    chunks: list[bytes] = []
    size = 0
    for raw in response.iter_raw(_CHUNK):
        pending = raw
        while pending:
            if inflater is None:
                piece, pending = pending, b""
            else:  # never more than what still fits under the limit, plus one byte
                piece = inflater.decompress(pending, request.limit - size + 1)
                pending = inflater.unconsumed_tail
            size += len(piece)
            if size > request.limit:
                raise too_large
            chunks.append(piece)
        if time.monotonic() > request.deadline:
            raise RequestFailed("network", too_slow)
    if inflater is not None:
        if not inflater.eof:
            raise RequestFailed("network", "the answer from cursor.com was cut short")
        chunks.append(inflater.flush())
    return b"".join(chunks)


def _events_page(body: bytes) -> tuple[int | None, list[Any] | None]:
    """(totalUsageEventsCount, usageEventsDisplay) of one page, each None when absent.

    EventsUnavailable for anything but that envelope: not JSON, not an object, an object with
    neither key (an empty object is an empty window), a count or a list of another type."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        raise EventsUnavailable from None
    if not isinstance(doc, dict):
        raise EventsUnavailable
    count_raw = doc.get("totalUsageEventsCount")
    items = doc.get("usageEventsDisplay")
    if doc and count_raw is None and items is None:
        raise EventsUnavailable
    count: int | None = None
    if isinstance(count_raw, int) and not isinstance(count_raw, bool) and count_raw >= 0:
        count = count_raw
    elif isinstance(count_raw, str) and count_raw.isascii() and count_raw.isdigit():
        if len(count_raw) > 12:
            raise EventsUnavailable
        count = int(count_raw)
    elif count_raw is not None:
        raise EventsUnavailable
    if items is not None and not isinstance(items, list):
        raise EventsUnavailable
    if items is not None and count is None:
        raise EventsUnavailable  # events without their count cannot be paged
    return count, items
