"""`config.json`: settings shared by every front end."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, NamedTuple

from codeburn.cache.dirs import config_dir
from codeburn.cache.files import locked, read_json, write_json_atomic

CONFIG_FILE = "config.json"


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


class Budget(NamedTuple):
    daily: float | None = None
    monthly: float | None = None


def _positive(value: Any) -> float | None:
    """A budget amount: a finite number > 0 (10^400 or 1e309 is none: the default applies)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and number > 0 else None


def load_config() -> dict[str, Any]:
    data = read_json(config_path())
    return data if isinstance(data, dict) else {}


def cursor_sync_env_off() -> bool:
    """`CODEBURN_CURSOR_SYNC=0` turns automatic sync off, whatever config.json says."""
    return os.environ.get("CODEBURN_CURSOR_SYNC", "").strip() == "0"


def cursor_sync_enabled(config: dict[str, Any] | None = None) -> bool:
    if cursor_sync_env_off():
        return False
    value = (config if config is not None else load_config()).get("cursorSync", True)
    return value is not False


def budget_from_config(config: dict[str, Any] | None = None) -> Budget:
    raw = (config if config is not None else load_config()).get("budget")
    if not isinstance(raw, dict):
        return Budget()
    return Budget(daily=_positive(raw.get("daily")), monthly=_positive(raw.get("monthly")))


def set_config_value(key: str, value: Any) -> None:
    """Update one key of config.json under the lock, keeping every other key."""
    path = config_path()
    with locked(path):
        data = read_json(path)
        data = data if isinstance(data, dict) else {}
        data[key] = value
        write_json_atomic(path, data)
