"""The editor settings of the `codeburn` section (SPEC §10), typed, with defaults.

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
from codeburn.server.names import SETTINGS_SECTION

SECTION: Final = SETTINGS_SECTION
MIN_REFRESH_S: Final = 10
# Test seam: a lower least refresh interval (whole seconds), so that a test of the timer waits
# a second for a tick instead of ten. Users never set it; a bad value is ignored.
MIN_REFRESH_ENV: Final = "CODEBURN_MIN_REFRESH_S"
STATUS_BAR_CHOICES: Final = ("today", "month", "both")


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

    def budget(self) -> Budget:
        """0 means off (null in the status object)."""
        return Budget(daily=self.budget_daily or None, monthly=self.budget_monthly or None)


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


def _status_bar(value: Any) -> str:
    if value not in STATUS_BAR_CHOICES:
        raise _Invalid(f"expected one of {', '.join(STATUS_BAR_CHOICES)}")
    return str(value)


# dotted setting name (without "codeburn.") → (field, converter)
SETTINGS: Final[dict[str, tuple[str, Callable[[Any], Any]]]] = {
    "cursorSync.enabled": ("cursor_sync_enabled", _boolean),
    "cursor.databasePath": ("cursor_database_path", _text),
    "refreshIntervalSeconds": ("refresh_interval_seconds", _interval),
    "statusBar.show": ("status_bar_show", _status_bar),
    "budget.daily": ("budget_daily", _money),
    "budget.monthly": ("budget_monthly", _money),
    "python.interpreter": ("python_interpreter", _text),
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
