"""Helpers that build real Cursor databases for the tests."""

from __future__ import annotations

from pathlib import Path

from codeburn.providers.ide.reader import CursorReader, ReadResult
from codeburn.providers.localtime import iso_utc, local_midnight_ms, now_ms, six_month_floor
from codeburn.providers.plan import LONG_LIVED, Plan
from codeburn.providers.samples.profile_writer import ProfileWriter

NOW_MS = now_ms()  # when the test module was imported, by the suite's clock


def ago(minutes: float) -> str:
    """ISO createdAt `minutes` before the test started."""
    return iso_utc(NOW_MS - int(minutes * 60_000))


def profile(tmp_path: Path, **kwargs: object) -> ProfileWriter:
    return ProfileWriter(tmp_path / "Cursor", **kwargs)  # type: ignore[arg-type]


def read(
    db: Path,
    *,
    budget: int | None = None,
    first_seen: dict[str, int] | None = None,
    plan: Plan = LONG_LIVED,
) -> ReadResult:
    floor = local_midnight_ms(six_month_floor())
    reader = CursorReader(db, floor_ms=floor, budget=budget, first_seen=first_seen, plan=plan)
    return reader.read()


def by_key(result: ReadResult) -> dict[str, object]:
    return {c.key: c for c in result.calls}
