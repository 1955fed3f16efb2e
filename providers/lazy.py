"""A package's surface imported on first use (PEP 562).

A warm status answers from our caches: importing every reader of Cursor's files (the agent
graph, the 3.x layout, the export parsers) before it would be a large share of its time.
A package's `__init__` names its surface for the type checker under `TYPE_CHECKING`
and gives `lazy_surface` where each name lives; tests/test_layout.py holds the two equal.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_surface(package: str, where: Mapping[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: each name of `where` (module → its names)
    imported from its module when first asked for, then kept in the package."""
    module_of = {name: module for module, names in where.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
