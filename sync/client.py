"""The two cursor.com calls we make: the usage export (CSV) and the usage summary (JSON).

Errors carry our own words only; a response body is never put into a message or a log.
"""

from __future__ import annotations

import ipaddress
import json
import os
import threading
import time
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
USER_AGENT = "codeburn"
MAX_BODY_BYTES = 256 * 1024 * 1024
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

    def export_csv(self, start_ms: int, end_ms: int, *, budget_s: float) -> bytes:
        """The usage export for [start_ms, end_ms]; raises RequestFailed. Never exceeds budget_s."""
        params = {"startDate": str(start_ms), "endDate": str(end_ms), "strategy": "tokens"}
        body = self._get(EXPORT_PATH, params, "text/csv", budget_s, "the usage export")
        return body

    def usage_summary(self, *, budget_s: float = SUMMARY_BUDGET_S) -> Any:
        """The parsed usage-summary JSON; raises RequestFailed."""
        body = self._get(SUMMARY_PATH, {}, "application/json", budget_s, "the usage summary")
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise RequestFailed("export", "cursor.com did not return the usage summary") from exc

    def _get(
        self, path: str, params: dict[str, str], accept: str, budget_s: float, what: str
    ) -> bytes:
        # The request runs on a worker thread so that a server stalling mid-body cannot hold
        # the caller past the budget; the abandoned worker dies at its own read timeout.
        outcome = _Outcome()
        request = _Request(path, params, accept, time.monotonic() + budget_s, budget_s, what)
        worker = threading.Thread(
            target=self._fetch,
            args=(request, outcome),
            name="codeburn-cursor-request",
            daemon=True,
        )
        worker.start()
        worker.join(max(0.0, budget_s))
        if worker.is_alive():
            raise RequestFailed("network", f"cursor.com did not answer within {budget_s:g} s")
        if outcome.error is not None:
            if isinstance(outcome.error, RequestFailed):
                raise outcome.error
            raise RequestFailed("network", "could not reach cursor.com") from None
        assert outcome.body is not None
        return outcome.body

    def _headers(self, accept: str) -> dict[str, str]:
        return {
            "Cookie": self._credentials.cookie,
            "Origin": ORIGIN,
            "Accept": accept,
            "User-Agent": USER_AGENT,
        }

    def _fetch(self, request: _Request, outcome: _Outcome) -> None:
        remaining = max(0.1, request.deadline - time.monotonic())
        timeout = httpx.Timeout(remaining, connect=min(remaining, 10.0))
        loopback = _is_loopback(httpx.URL(self._base).host)
        too_slow = f"cursor.com did not answer within {request.budget_s:g} s"
        try:
            with (
                httpx.Client(
                    timeout=timeout,
                    transport=self._transport,
                    trust_env=not loopback,
                    follow_redirects=False,
                ) as client,
                client.stream(
                    "GET",
                    self._base + request.path,
                    params=request.params,
                    headers=self._headers(request.accept),
                ) as response,
            ):
                if response.status_code != 200:
                    raise _status_failure(response, request.what)
                outcome.body = self._read_body(response, request.deadline, too_slow)
        except RequestFailed as exc:
            outcome.error = exc
        except httpx.TimeoutException:
            outcome.error = RequestFailed("network", too_slow)
        except (httpx.HTTPError, OSError):
            outcome.error = RequestFailed("network", "could not reach cursor.com")

    @staticmethod
    def _read_body(response: httpx.Response, deadline: float, too_slow: str) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes(_CHUNK):
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise RequestFailed("export", "the answer from cursor.com was too large")
            if time.monotonic() > deadline:
                raise RequestFailed("network", too_slow)
            chunks.append(chunk)
        return b"".join(chunks)
