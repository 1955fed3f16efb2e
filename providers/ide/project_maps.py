"""A long-lived reader's memo of each root's project map (`workspaces.read_project_map`),
shared by the threads that read: machinery apart from the rule in `workspaces`."""

from __future__ import annotations

import threading
from pathlib import Path

from codeburn.providers.ide.workspaces import read_project_map, storage_fingerprint


class ProjectMaps:
    """Per-root memo of `read_project_map`, re-read only when the storage fingerprint moves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._maps: dict[Path, tuple[str, dict[str, str]]] = {}

    def get(self, root: Path) -> tuple[str, dict[str, str]]:
        fingerprint = storage_fingerprint(root)
        with self._lock:
            cached = self._maps.get(root)
            if cached and cached[0] == fingerprint:
                return cached
        mapping = read_project_map(root)
        with self._lock:
            self._maps[root] = (fingerprint, mapping)
        return fingerprint, mapping


PROJECT_MAPS = ProjectMaps()
