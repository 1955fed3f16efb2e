"""A loopback fake of cursor.com for sync, quota and server tests.

A real HTTP server on 127.0.0.1 in a thread. It serves the usage export from `rows` (filtered by
the request's window, like cursor.com), checks the cookie and the Origin, records every request,
and can answer with each failure the sync must survive (`mode`). The JSON usage events
(`POST get-filtered-usage-events`) are served from `events` (dicts as cursor.com sends them),
paged as asked; while `events` is None that endpoint answers 404, as a cursor.com without it
would, so the sync falls back to the export (what most CSV tests exercise). `events_mode` makes
it fail each way the JSON sync must survive.

    with FakeCursor(expected_cookie=cookie) as fake:
        monkeypatch.setenv("CODEBURN_CURSOR_BASE_URL", fake.url)
        fake.rows.append(ExportRow(...))
        fake.mode = "429"

Also: `make_jwt(sub, exp)` and `write_global_db(path, token)` build Cursor's login fixture, and
`setup_sync_env(tmp_path, monkeypatch, fake)` points every CodeBurn dir and cursor.com at `tmp_path`
and the fake (tests/sync/conftest.py wraps it as the `sync_env` fixture).
"""

from __future__ import annotations

import base64
import json
import sqlite3
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

import pytest

from codeburn.providers.localtime import now_ms, parse_iso_ms
from tests.csv_fixtures import ExportRow, export_bytes

EXPORT_PATH = "/api/dashboard/export-usage-events-csv"
EVENTS_PATH = "/api/dashboard/get-filtered-usage-events"
SUMMARY_PATH = "/api/usage-summary"
ORIGIN = "https://cursor.com"
TEST_SUB = "auth0|user_sync_test"
TEST_USER_ID = "user_sync_test"
WEEK_S = 7 * 24 * 3600
FIXED_NOW_MS = 1_795_000_000_000  # 2026-11-18T08:26:40Z: the `fixed_clock` fixture's moment

Mode = Literal["ok", "401", "403", "429", "500", "not-csv", "truncated", "stall"]
EventsMode = Literal[
    "ok", "401", "403", "429", "500", "503", "stall", "truncated", "404", "405",
    "garbage", "html", "unknown-schema", "count-changes", "too-large", "204",
]  # fmt: skip

PERSONAL_SUMMARY: dict[str, Any] = {
    "billingCycleStart": "2026-11-05T04:38:09.000Z",
    "billingCycleEnd": "2026-12-05T04:38:09.000Z",
    "membershipType": "pro",
    "limitType": "user",
    "isUnlimited": False,
    "individualUsage": {
        "plan": {
            "enabled": True,
            "used": 1500,
            "limit": 2000,
            "remaining": 500,
            "breakdown": {"included": 1500, "bonus": 0, "total": 1500},
            "autoPercentUsed": 12.5,
            "apiPercentUsed": 64.25,
            "totalPercentUsed": 38.4,
        },
        "onDemand": {"enabled": True, "used": 1625, "limit": 5000, "remaining": 3375},
    },
    "teamUsage": {},
}

TEAM_SUMMARY: dict[str, Any] = {
    "billingCycleStart": "2026-11-01T00:00:00.000Z",
    "billingCycleEnd": "2026-12-01T00:00:00.000Z",
    "membershipType": "enterprise",
    "limitType": "team",
    "individualUsage": {
        "overall": {"enabled": True, "used": 1250, "limit": 5000, "remaining": 3750},
        "onDemand": {"enabled": True, "used": 640, "limit": None, "remaining": None},
    },
    "teamUsage": {
        "pooled": {"enabled": True, "used": 12000, "limit": 100000, "remaining": 88000},
        "onDemand": {"enabled": True, "used": 320, "limit": 0, "remaining": None},
    },
}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def make_jwt(sub: str = TEST_SUB, exp: int | None = None, **claims: Any) -> str:
    """An unsigned-looking JWT (the signature is junk; nobody verifies it)."""
    payload: dict[str, Any] = {"sub": sub, **claims}
    if exp is not None:
        payload["exp"] = exp
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64(json.dumps(payload).encode())
    return f"{header}.{body}.{_b64(b'not-a-real-signature')}"


def cookie_for(token: str, user_id: str = TEST_USER_ID) -> str:
    return f"WorkosCursorSessionToken={user_id}%3A%3A{token}"


def write_global_db(path: Path, token: str | None) -> Path:
    """Cursor's global state.vscdb with `cursorAuth/accessToken` in ItemTable (None: signed out)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        for table in ("ItemTable", "cursorDiskKV"):
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {table} "
                "(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"
            )
        conn.execute("DELETE FROM ItemTable WHERE key = 'cursorAuth/accessToken'")
        if token is not None:
            conn.execute(
                "INSERT INTO ItemTable (key, value) VALUES ('cursorAuth/accessToken', ?)", (token,)
            )
        conn.commit()
    finally:
        conn.close()
    return path


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None  # the parsed JSON body of a POST

    @property
    def start_ms(self) -> int:
        return int(self.query["startDate"])

    @property
    def end_ms(self) -> int:
        return int(self.query["endDate"])


class _QuietServer(ThreadingHTTPServer):
    """A client that drops a kept-alive connection is normal; don't print a traceback for it
    (it would land in the captured stderr of the test that checks stderr stays empty)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass
class FakeCursor:
    """Configure between requests: `rows`, `mode`, `retry_after`, `summary`, `summary_mode`."""

    expected_cookie: str | None = None
    rows: list[ExportRow] = field(default_factory=list)
    mode: Mode = "ok"
    retry_after: str | None = None
    stall_s: float = 30.0
    summary: Any = field(default_factory=lambda: json.loads(json.dumps(PERSONAL_SUMMARY)))
    summary_mode: Mode = "ok"
    filter_window: bool = True  # False: also send rows outside the window (a sloppy server)
    variant: str = "current"  # "team": the export with a User column
    echo_cookie: bool = False  # True: every answer repeats the cookie (headers and failure bodies)
    events: list[dict[str, Any]] | None = None  # None: no JSON usage events endpoint (404)
    events_mode: EventsMode = "ok"
    events_hidden: int = 0  # events counted but never shown (the last pages show fewer)
    events_empty: Literal["{}", "count", "full"] = "full"  # how an empty window is answered
    events_cap: int | None = None  # serve at most this many a page (paged by it), whatever is asked
    events_delay_s: float = 0.0  # every events page is answered this late
    events_body: bytes | None = None  # every events page answers these bytes as they are
    events_headers: dict[str, str] = field(default_factory=dict)  # e.g. Content-Encoding: gzip
    requests: list[RecordedRequest] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _release: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def export_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == EXPORT_PATH]

    def events_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == EVENTS_PATH]

    def events_page(self, start_ms: int, end_ms: int, page: int, size: int) -> dict[str, Any]:
        """One page of the window's events; hidden events count but are never shown."""
        chosen: list[dict[str, Any] | None] = [
            e for e in self.events or [] if start_ms <= int(e["timestamp"]) <= end_ms
        ]
        chosen += [None] * self.events_hidden
        total = len(chosen)
        if total == 0 and self.events_empty != "full":
            return {} if self.events_empty == "{}" else {"totalUsageEventsCount": 0}
        if self.events_cap is not None:
            size = min(size, self.events_cap)
        shown = [e for e in chosen[(page - 1) * size : page * size] if e is not None]
        if self.events_mode == "count-changes" and page > 1:
            total += 1
        if self.events_mode == "too-large":
            shown = (shown * (size + 1))[: size + 1] if shown else [{"timestamp": "1"}] * (size + 1)
        if not shown and page > 1:
            return {"totalUsageEventsCount": str(total)}  # a page of hidden events: count alone
        return {"totalUsageEventsCount": total, "usageEventsDisplay": shown}

    def summary_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == SUMMARY_PATH]

    def start(self) -> FakeCursor:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> FakeCursor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def export_body(self, start_ms: int, end_ms: int) -> bytes:
        chosen = []
        for row in self.rows:
            ms = parse_iso_ms(row.date)
            if ms is not None and (not self.filter_window or start_ms <= ms <= end_ms):
                chosen.append(row)
        return export_bytes(chosen, self.variant)

    def stall(self) -> None:
        self._release.wait(self.stall_s)

    def release_wait(self, seconds: float) -> None:
        self._release.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeCursor
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._cookie = headers.get("cookie", "")
        self.owner.record(RecordedRequest(parts.path, query, headers))
        if parts.path == EXPORT_PATH:
            self._export(query, headers)
        elif parts.path == SUMMARY_PATH:
            self._summary(headers)
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        raw = self.rfile.read(int(headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.owner.record(RecordedRequest(parts.path, dict(parse_qsl(parts.query)), headers, body))
        if parts.path == EVENTS_PATH and self.owner.events is not None:
            self._events(body, headers)
        else:
            self._send(404, b"<html>SERVER SECRET TEXT not found</html>", "text/html")

    def _events(self, body: Any, headers: dict[str, str]) -> None:
        mode = self.owner.events_mode
        if not self._authorised(headers):
            return
        if self.owner.events_delay_s:
            self.owner.release_wait(self.owner.events_delay_s)
        if mode in ("401", "403", "429", "500", "stall"):
            self._failure(mode)
            return
        if mode in ("404", "405", "503"):
            self._send(int(mode), b"<html>SERVER SECRET TEXT</html>", "text/html")
            return
        if headers.get("content-type") != "application/json":
            self._send(415, b"json only", "text/plain")
            return
        try:
            assert isinstance(body, dict) and body["teamId"] == 0
            start, end = int(body["startDate"]), int(body["endDate"])
            assert isinstance(body["startDate"], str) and isinstance(body["endDate"], str)
            page, size = body["page"], body["pageSize"]
            assert isinstance(page, int) and isinstance(size, int) and page >= 1 and size >= 1
        except (AssertionError, KeyError, TypeError, ValueError):
            self._send(400, b"bad request", "text/plain")
            return
        if self.owner.events_body is not None:
            self._send(200, self.owner.events_body, "application/json", self.owner.events_headers)
        elif mode == "garbage":
            garbage = b'{"totalUsageEventsCount": 3, "usageEve\x00SERVER SECRET'
            self._send(200, garbage, "text/plain")
        elif mode == "html":
            self._send(200, b"<!DOCTYPE html><html>SERVER SECRET TEXT login</html>", "text/html")
        elif mode == "204":
            self._send(204, b"", "application/json")
        elif mode == "unknown-schema":
            doc = {"events": self.owner.events, "total": len(self.owner.events or [])}
            self._send(200, json.dumps(doc).encode(), "application/json")
        else:
            doc = self.owner.events_page(start, end, page, size)
            data = json.dumps(doc).encode()
            if mode == "truncated":
                self._truncated(data, "application/json")
            else:
                self._send(200, data, "application/json")

    def _authorised(self, headers: dict[str, str]) -> bool:
        expected = self.owner.expected_cookie
        if expected is not None and headers.get("cookie") != expected:
            self._send(401, b'{"error":"not_authenticated"}', "application/json")
            return False
        if headers.get("origin") != ORIGIN:
            self._send(403, b'{"error":"bad origin"}', "application/json")
            return False
        return True

    def _failure(self, mode: Mode) -> bool:
        """Answer a configured failure; False when the mode is `ok`."""
        if mode == "ok":
            return False
        if mode == "stall":
            self.owner.stall()
            self.close_connection = True
            return True
        if mode in ("401", "403", "500"):
            self._send(int(mode), b"<html>SERVER SECRET TEXT</html>", "text/html")
        elif mode == "429":
            extra = {"Retry-After": self.owner.retry_after} if self.owner.retry_after else {}
            self._send(429, b"SERVER SECRET TEXT slow down", "text/plain", extra)
        elif mode == "not-csv":
            self._send(200, b"<!DOCTYPE html><html>SERVER SECRET TEXT login</html>", "text/html")
        return mode != "truncated"

    def _export(self, query: dict[str, str], headers: dict[str, str]) -> None:
        if not self._authorised(headers) or self._failure(self.owner.mode):
            return
        try:
            start, end = int(query["startDate"]), int(query["endDate"])
        except (KeyError, ValueError):
            self._send(400, b"bad window", "text/plain")
            return
        if query.get("strategy") != "tokens":
            self._send(400, b"bad strategy", "text/plain")
            return
        body = self.owner.export_body(start, end)
        if self.owner.mode == "truncated":
            self._truncated(body, "text/csv")
        else:
            self._send(200, body, "text/csv; charset=utf-8")

    def _summary(self, headers: dict[str, str]) -> None:
        if not self._authorised(headers) or self._failure(self.owner.summary_mode):
            return
        summary = self.owner.summary
        body = summary if isinstance(summary, bytes) else json.dumps(summary).encode()
        if self.owner.summary_mode == "truncated":
            self._truncated(body, "application/json")
        else:
            self._send(200, body, "application/json")

    def _truncated(self, body: bytes, content_type: str) -> None:
        """Promise more bytes than are sent, then hang up mid-body."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) + 4096))
        self.end_headers()
        self.wfile.write(body[: max(1, len(body) // 2)])
        self.wfile.flush()
        self.close_connection = True

    def _send(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        if self.owner.echo_cookie:
            cookie = getattr(self, "_cookie", "")
            extra = {
                **(extra or {}),
                "Set-Cookie": f"{cookie}; Path=/; HttpOnly",
                "WWW-Authenticate": f'Bearer realm="{cookie}"',
            }
            if status != 200:
                body += f" you sent {cookie}".encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


@dataclass
class SyncEnv:
    """One machine: Cursor's global DB with a login, our dirs, and cursor.com's fake."""

    db_path: Path
    fake: FakeCursor
    token: str
    exp: int
    cache_dir: Path
    config_dir: Path

    def sign_in(self, sub: str, exp: int, user_id: str) -> str:
        """Replace Cursor's login with a new token; the fake then only accepts its cookie."""
        self.token = make_jwt(sub, exp)
        self.exp = exp
        write_global_db(self.db_path, self.token)
        self.fake.expected_cookie = cookie_for(self.token, user_id)
        return self.token

    def sign_out(self) -> None:
        write_global_db(self.db_path, None)


def setup_sync_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeCursor) -> SyncEnv:
    """Private cache/config dirs, Cursor signed in as `auth0|user_sync_test`, base URL → fake."""
    cache = tmp_path / "cache"
    config = tmp_path / "config"
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(cache))
    monkeypatch.setenv("CODEBURN_CONFIG_DIR", str(config))
    monkeypatch.delenv("CODEBURN_CURSOR_SYNC", raising=False)
    monkeypatch.setenv("CODEBURN_CURSOR_BASE_URL", fake.url)
    exp = now_ms() // 1000 + WEEK_S
    token = make_jwt(exp=exp)
    db = write_global_db(tmp_path / "Cursor" / "User" / "globalStorage" / "state.vscdb", token)
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(db))
    fake.expected_cookie = cookie_for(token)
    return SyncEnv(db, fake, token, exp, cache, config)
