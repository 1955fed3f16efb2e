"""Where Cursor's database is looked for (docs/local-data.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeburn.providers.ide.paths import (
    default_db_path,
    resolve_db_path,
    workspace_storage_dir,
)

TAIL = ("Cursor", "User", "globalStorage", "state.vscdb")


def test_macos_location() -> None:
    home = Path("/Users/me")
    assert default_db_path("darwin", home) == home.joinpath("Library", "Application Support", *TAIL)


def test_windows_appdata_and_its_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path("/home/win")
    monkeypatch.setenv("APPDATA", "/roaming/elsewhere")
    assert default_db_path("win32", home) == Path("/roaming/elsewhere").joinpath(*TAIL)
    monkeypatch.setenv("APPDATA", "  ")
    assert default_db_path("win32", home) == home.joinpath("AppData", "Roaming", *TAIL)
    monkeypatch.delenv("APPDATA")
    assert default_db_path("win32", home) == home.joinpath("AppData", "Roaming", *TAIL)


def test_linux_xdg_config_home_and_its_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path("/home/me")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/data/cfg")
    redirected = default_db_path("linux", home)
    assert redirected == Path("/data/cfg").joinpath(*TAIL)
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    assert default_db_path("linux", home) == home.joinpath(".config", *TAIL)
    assert default_db_path("linux", home) != redirected


def test_override_order_setting_then_cli_then_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEBURN_CURSOR_DB", "/env/state.vscdb")
    assert resolve_db_path("/setting/db", "/cli/db") == Path("/setting/db")
    assert resolve_db_path("", "/cli/db") == Path("/cli/db")
    assert resolve_db_path(None, None) == Path("/env/state.vscdb")
    monkeypatch.delenv("CODEBURN_CURSOR_DB")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/x")
    assert resolve_db_path(None, None) == default_db_path()


def test_workspace_storage_follows_the_database() -> None:
    db = Path("/data/cfg/Cursor/User/globalStorage/state.vscdb")
    assert workspace_storage_dir(db) == Path("/data/cfg/Cursor/User/workspaceStorage")
