"""Where CodeBurn keeps its own files."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "codeburn"


def _from_env(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """`CODEBURN_CACHE_DIR`, else the platform's user cache folder."""
    return _from_env("CODEBURN_CACHE_DIR") or Path(platformdirs.user_cache_dir(APP))


def config_dir() -> Path:
    """`CODEBURN_CONFIG_DIR`, else the platform's user config folder."""
    return _from_env("CODEBURN_CONFIG_DIR") or Path(platformdirs.user_config_dir(APP))


def imports_dir() -> Path:
    return cache_dir() / "imports"
