"""Where Cursor keeps its global database and workspace mappings
(docs/local-data.md#where-cursors-data-lives)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DB_NAME = "state.vscdb"
_GLOBAL_TAIL = ("Cursor", "User", "globalStorage", DB_NAME)


def _nonblank_env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def default_db_path(platform: str | None = None, home: Path | None = None) -> Path:
    """The platform's default location of Cursor's global `state.vscdb`."""
    platform = platform or sys.platform
    home = home or Path.home()
    if platform == "darwin":
        return home.joinpath("Library", "Application Support", *_GLOBAL_TAIL)
    if platform.startswith("win"):
        appdata = _nonblank_env("APPDATA")
        root = Path(appdata) if appdata else home / "AppData" / "Roaming"
        return root.joinpath(*_GLOBAL_TAIL)
    xdg = _nonblank_env("XDG_CONFIG_HOME")
    root = Path(xdg) if xdg else home / ".config"
    return root.joinpath(*_GLOBAL_TAIL)


def resolve_db_path(setting: str | None = None, cli: str | None = None) -> Path:
    """Explicit override first (editor setting, then `--cursor-db`, then env), else the default."""
    for candidate in (setting, cli, _nonblank_env("CODEBURN_CURSOR_DB")):
        if candidate and candidate.strip():
            return Path(candidate.strip()).expanduser()
    return default_db_path()


def canonical(path: Path) -> Path:
    """Absolute, symlink-free form used in every cache key."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
        return path.absolute()


def workspace_storage_dir(db_path: Path) -> Path:
    """`<db>/../../workspaceStorage`: follows a redirected data root."""
    return db_path.parent.parent / "workspaceStorage"


def cursor_home() -> Path:
    """Cursor's per-user folder (`~/.cursor`): agent transcripts and Cursor Agent CLI sessions.

    Env `CODEBURN_CURSOR_HOME` overrides it (tests, or a copied home).
    """
    override = _nonblank_env("CODEBURN_CURSOR_HOME")
    return Path(override).expanduser() if override else Path.home() / ".cursor"
