"""Project names people read (docs/local-data.md#projects): the folder's name, with as much
parent path as needed to tell two apart (`work/api`, `oss/api`), and "(no project)" for
conversations without one.

The project slug (`-home-dev-web-app`) stays the stable id; the folder comes from the readers'
slug → path map, because the slug cannot tell `/` from `-`. A slug whose folder is not known (a
sealed day of a workspace gone before folders were kept, a transcript folder's own slug) is named
from the slug itself, with `path: null`: without its home prefix (`-home-dev-web-app` → `web-app`),
a home folder by its own name (`-home-liam` → `liam`, `-root` → `root`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from codeburn.providers import UNMAPPED_PROJECT

NO_PROJECT: Final = "(no project)"
# A home folder's slug: `-home-<user>`, `-Users-<user>` (macOS), `-C-Users-<user>` (Windows),
# `-root`; group 1 is the home folder's own name.
_HOME_SLUG: Final = re.compile(r"-(?:(?:[A-Za-z]:?-)?(?:home|Users)-([^-]+)|(root))(?:-|$)")


def _split(path: str) -> tuple[str, list[str]]:
    """(the remote authority, "" for a local folder; the folder's path segments)."""
    host = ""
    if "://" in path:  # a remote folder's URI: `vscode-remote://ssh-remote+box/srv/app`
        host, _, path = path.split("://", 1)[1].partition("/")
    return host, [p for p in path.replace("\\", "/").split("/") if p]


def slug_name(slug: str) -> str:
    """The name of a folder known only by its slug: the slug without the leading `-` and its
    home prefix; a home folder's own name. (A slug cannot tell `/` from `-`: `-home-me-web-app`
    is `web-app`, though the folder may have been `/home/me/web/app`.)"""
    home = _HOME_SLUG.match(slug)
    if home is None:
        return slug.removeprefix("-") or slug
    return slug[home.end() :] or home.group(1) or home.group(2)


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
        # A folder whose whole path is the tail of another's shows in full (`/x/svc`, `/a/x/svc`);
        # a top-level folder no other ends with is named like any other (`/root` → `root`).
        clash = any(o[-n:] == parts[-n:] for o in others if len(o) >= n)
        whole = n == len(parts) and (n > 1 or clash)
        name = ("" if host else "/") + "/".join(parts) if whole else "/".join(parts[-n:])
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
        if path is not None:
            return self._names[path]
        return slug_name(slug) if slug.startswith("-") else slug

    def fields(self, slug: str) -> dict[str, Any]:
        """The JSON of a named project: `project` (the stable slug), `name`, `path` (or null)."""
        return {"project": slug, "name": self.name(slug), "path": self.paths.get(slug)}
