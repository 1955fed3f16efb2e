"""Project names people read (docs/local-data.md#projects): the folder's name, with as much
parent path as needed to tell two apart (`work/api`, `oss/api`), and "(no project)" for
conversations without one.

The project slug (`-home-dev-web-app`) stays the stable id; the folder comes from the readers'
slug → path map, because the slug cannot tell `/` from `-`. A slug whose folder is not known (a
sealed day of a workspace gone before folders were kept, a transcript folder's own slug) shows
as itself, with `path: null`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from codeburn.providers import UNMAPPED_PROJECT

NO_PROJECT: Final = "(no project)"


def _split(path: str) -> tuple[str, list[str]]:
    """(the remote authority, "" for a local folder; the folder's path segments)."""
    host = ""
    if "://" in path:  # a remote folder's URI: `vscode-remote://ssh-remote+box/srv/app`
        host, _, path = path.split("://", 1)[1].partition("/")
    return host, [p for p in path.replace("\\", "/").split("/") if p]


def folder_names(paths: Iterable[str]) -> dict[str, str]:
    """path → the shortest tail of it that no other folder of `paths` ends with (a remote
    folder's is followed by its host: `api (ssh-remote+box)`); the whole path when needed."""
    split = {p: _split(p) for p in set(paths)}
    names: dict[str, str] = {}
    for path, (host, parts) in split.items():
        if not parts:
            names[path] = path
            continue
        others = [o for other, (h, o) in split.items() if h == host and other != path]
        n = 1
        while n < len(parts) and any(o[-n:] == parts[-n:] for o in others if len(o) >= n):
            n += 1
        name = "/".join(parts[-n:]) if n < len(parts) else ("" if host else "/") + "/".join(parts)
        names[path] = f"{name} ({host})" if host else name
    return names


class ProjectNames:
    """What each project slug is called, given every folder the readers know (`paths`): names
    are told apart across all of them, so a project keeps its name from one period to the next."""

    def __init__(self, paths: Mapping[str, str] | None = None) -> None:
        self.paths = dict(paths or {})
        self._names = folder_names(self.paths.values())

    def name(self, slug: str) -> str:
        if slug == UNMAPPED_PROJECT:
            return NO_PROJECT
        path = self.paths.get(slug)
        return slug if path is None else self._names[path]

    def fields(self, slug: str) -> dict[str, Any]:
        """The JSON of a named project: `project` (the stable slug), `name`, `path` (or null)."""
        return {"project": slug, "name": self.name(slug), "path": self.paths.get(slug)}
