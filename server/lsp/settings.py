"""The editor settings of the `codeburn` section (docs/editor.md#settings), typed, with defaults.

Clients send the section nested (`{"budget": {"daily": 5}}`, what VS Code returns) or with dotted
keys (`{"budget.daily": 5}`); both are accepted. A bad value falls back to its default and yields a
warning for the log, never an exception.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

from codeburn.cache import Budget
from codeburn.server.names import PROVIDER_CHOICES, SETTINGS_SECTION

SECTION: Final = SETTINGS_SECTION
MIN_REFRESH_S: Final = 10
MIN_SYNC_INTERVAL_MIN: Final = 2
# Test seam: a lower least refresh interval (whole seconds), so that a test of the timer waits
# a second for a tick instead of ten. Users never set it; a bad value is ignored.
MIN_REFRESH_ENV: Final = "CODEBURN_MIN_REFRESH_S"
STATUS_BAR_CHOICES: Final = ("today", "month", "both")
STATUS_BAR_PERIODS: Final = ("month", "cycle")
MAX_THRESHOLDS: Final = 10


@dataclass(frozen=True, slots=True)
class Settings:
    """`codeburn.*` settings; field metadata holds the setting's dotted name."""

    cursor_sync_enabled: bool = True
    cursor_database_path: str = ""
    refresh_interval_seconds: int = 30
    status_bar_show: str = "both"
    budget_daily: float = 0.0
    budget_monthly: float = 0.0
    python_interpreter: str = ""
    status_bar_period: str = "month"
    alerts_enabled: bool = True
    alerts_included_percent: tuple[float, ...] = (80.0, 100.0)
    cursor_sync_interval_minutes: int = 5
    providers: tuple[str, ...] = ()  # what the status bar, budgets and alerts count; () = all

    def budget(self) -> Budget:
        """0 means off (null in the status object)."""
        return Budget(daily=self.budget_daily or None, monthly=self.budget_monthly or None)

    def counted(self) -> frozenset[str] | None:
        """The tools the status counts; None: every tool found (docs/other-tools.md)."""
        return frozenset(self.providers) if self.providers else None


class _Invalid(ValueError):
    """The value does not fit the setting; the message says what is expected."""


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid("expected true or false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise _Invalid("expected a string")
    return value.strip()


def _path(value: Any) -> str:
    """A file path: a NUL or a lone surrogate cannot be in one (the OS call would raise)."""
    text = _text(value)
    if "\0" in text:
        raise _Invalid("expected a file path; it holds a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid("expected a file path; it holds text that is not Unicode") from None
    return text


def _finite(value: Any) -> bool:
    """A JSON number a float can hold (a 400-digit integer is not: `math.isfinite` raises)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _money(value: Any) -> float:
    if not _finite(value):
        raise _Invalid("expected a number of US dollars (0 = off)")
    if value < 0:
        raise _Invalid("expected 0 (off) or a positive amount")
    return float(value)


def min_refresh_s() -> int:
    """The least `refreshIntervalSeconds` accepted: 10, or the test seam's lower value."""
    try:
        lowered = int(os.environ.get(MIN_REFRESH_ENV, ""))
    except ValueError:
        return MIN_REFRESH_S
    return lowered if 1 <= lowered < MIN_REFRESH_S else MIN_REFRESH_S


def _interval(value: Any) -> int:
    least = min_refresh_s()
    if not _finite(value):
        raise _Invalid(f"expected a number of seconds, at least {least}")
    if value < least:
        raise _Invalid(f"expected at least {least} seconds")
    return int(value)


def _sync_interval(value: Any) -> int:
    if not _finite(value):
        raise _Invalid(f"expected a number of minutes, at least {MIN_SYNC_INTERVAL_MIN}")
    if value < MIN_SYNC_INTERVAL_MIN:
        raise _Invalid(f"expected at least {MIN_SYNC_INTERVAL_MIN} minutes")
    return int(value)


def _status_bar(value: Any) -> str:
    if value not in STATUS_BAR_CHOICES:
        raise _Invalid(f"expected one of {', '.join(STATUS_BAR_CHOICES)}")
    return str(value)


def _period(value: Any) -> str:
    if value not in STATUS_BAR_PERIODS:
        raise _Invalid(f"expected one of {', '.join(STATUS_BAR_PERIODS)}")
    return str(value)


def _percents(value: Any) -> tuple[float, ...]:
    """Included-usage thresholds: a list of percentages above 0, each alerted once a cycle."""
    if not isinstance(value, list) or len(value) > MAX_THRESHOLDS:
        raise _Invalid(f"expected a list of at most {MAX_THRESHOLDS} percentages, like [80, 100]")
    if not all(_finite(v) and 0 < v <= 1000 for v in value):
        raise _Invalid("expected percentages above 0, like [80, 100]")
    return tuple(sorted({float(v) for v in value}))


TOOL_IDS: Final = tuple(p for p in PROVIDER_CHOICES if p != "all")


def _providers(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Invalid(f"expected a list of tool ids ({', '.join(TOOL_IDS)})")
    unknown = [v for v in value if v not in TOOL_IDS]
    if unknown:
        raise _Invalid(f"unknown tool {unknown[0]!r}; expected some of {', '.join(TOOL_IDS)}")
    return tuple(dict.fromkeys(value))


# dotted setting name (without "codeburn.") → (field, converter)
SETTINGS: Final[dict[str, tuple[str, Callable[[Any], Any]]]] = {
    "cursorSync.enabled": ("cursor_sync_enabled", _boolean),
    "cursorSync.intervalMinutes": ("cursor_sync_interval_minutes", _sync_interval),
    "cursor.databasePath": ("cursor_database_path", _path),
    "refreshIntervalSeconds": ("refresh_interval_seconds", _interval),
    "statusBar.show": ("status_bar_show", _status_bar),
    "budget.daily": ("budget_daily", _money),
    "budget.monthly": ("budget_monthly", _money),
    "python.interpreter": ("python_interpreter", _path),
    "statusBar.period": ("status_bar_period", _period),
    "alerts.enabled": ("alerts_enabled", _boolean),
    "alerts.includedPercent": ("alerts_included_percent", _percents),
    "providers": ("providers", _providers),
}
_DEFAULTS: Final[dict[str, Any]] = {f.name: f.default for f in fields(Settings)}


def flatten(raw: Any, prefix: str = "") -> dict[str, Any]:
    """Nested and dotted forms → `{"budget.daily": 5, ...}`; a `codeburn` wrapper is unwrapped."""
    if not isinstance(raw, Mapping):
        return {}
    if not prefix and isinstance(raw.get(SECTION), Mapping):
        raw = {**{k: v for k, v in raw.items() if k != SECTION}, **raw[SECTION]}
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            continue
        name = f"{prefix}{key}"
        if not prefix and name.startswith(f"{SECTION}."):
            name = name[len(SECTION) + 1 :]
        if isinstance(value, Mapping) and name not in SETTINGS:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _shown(value: Any, limit: int = 60) -> str:
    """The value as the log shows it: a 400-digit number or a long string is cut short."""
    try:
        text = repr(value)
    except ValueError:  # an integer too long to print
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text):,} characters)"


def parse_settings(*layers: Any) -> tuple[Settings, list[str]]:
    """Settings from one or more raw objects (later layers win) and warnings for bad values."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update(flatten(layer))
    values = dict(_DEFAULTS)
    warnings: list[str] = []
    for name, (field_name, convert) in SETTINGS.items():
        if name not in merged or merged[name] is None:
            continue
        try:
            values[field_name] = convert(merged[name])
        except _Invalid as exc:
            default = _DEFAULTS[field_name]
            warnings.append(
                f"setting {SECTION}.{name} = {_shown(merged[name])} ignored ({exc}); "
                f"using the default {default!r}"
            )
    return Settings(**values), warnings


def changed_settings(old: Settings, new: Settings) -> list[str]:
    """Dotted names (`codeburn.budget.daily`) of the settings whose value differs."""
    return [
        f"{SECTION}.{name}"
        for name, (field_name, _) in SETTINGS.items()
        if getattr(old, field_name) != getattr(new, field_name)
    ]
