"""Cursor's IDE database (`state.vscdb`): paths, login, workspaces, bubbles, the reader."""

from typing import TYPE_CHECKING

from codeburn.providers.lazy import lazy_surface

if TYPE_CHECKING:
    from codeburn.providers.ide.auth import (
        CursorToken,
        load_token,
        read_access_token,
        signed_in_email,
        token_from_string,
    )
    from codeburn.providers.ide.inline import NO_DATE
    from codeburn.providers.ide.paths import (
        canonical,
        cursor_home,
        resolve_db_path,
        workspace_storage_dir,
    )
    from codeburn.providers.ide.reader import CursorReader, ReadResult
    from codeburn.providers.ide.workspaces import (
        named_paths,
        path_project,
        project_name,
        storage_fingerprint,
    )
else:  # imported on first use (codeburn.providers.lazy)
    __getattr__ = lazy_surface(__name__)

__all__ = [
    "NO_DATE",
    "CursorReader",
    "CursorToken",
    "ReadResult",
    "canonical",
    "cursor_home",
    "load_token",
    "named_paths",
    "path_project",
    "project_name",
    "read_access_token",
    "resolve_db_path",
    "signed_in_email",
    "storage_fingerprint",
    "token_from_string",
    "workspace_storage_dir",
]
