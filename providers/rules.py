"""The rules identity of every file CodeBurn derives (docs/caches.md#rules-identity).

Figures are derived by code: the decoders of Cursor's and the other tools' files, the pricing
and its catalogue, the caches' own slices and the service's attribution. The identity is a
digest of those bytes, so any change to them (a rule, a price, a fix) gives every derived file
a new identity and a user's caches written under the old rules are derived again on the next
run, without anyone remembering to bump a version.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Final

# The folder holding the `providers`, `cache` and `server` packages (the repository, or
# `codeburn/` where the packages are installed or bundled).
PACKAGE_ROOT: Final = Path(__file__).resolve().parent.parent
# What derives figures: every module of these folders, and the price catalogue.
DERIVING: Final = ("providers", "cache", "server/service")
NOT_DERIVING: Final = ("providers/samples",)  # sample writers: the demo's data, not its rules
SUFFIXES: Final = (".py", ".json")


def deriving_files(root: Path = PACKAGE_ROOT) -> list[str]:
    """The files the identity is a digest of (paths relative to `root`), in a fixed order."""
    found: list[str] = []
    for folder in DERIVING:
        for parent, dirs, files in os.walk(root / folder):
            relative = Path(parent).relative_to(root).as_posix()
            dirs[:] = [d for d in dirs if f"{relative}/{d}" not in NOT_DERIVING]
            found += (f"{relative}/{name}" for name in files if name.endswith(SUFFIXES))
    return sorted(found)


def rules_identity(root: Path = PACKAGE_ROOT) -> str:
    """A digest of the deriving files' names and bytes (16 hex digits)."""
    digest = hashlib.sha256()
    for name in deriving_files(root):
        digest.update(name.encode() + b"\0")
        with open(root / name, "rb") as file:
            digest.update(file.read() + b"\0")
    return digest.hexdigest()[:16]


RULES: Final = rules_identity()
