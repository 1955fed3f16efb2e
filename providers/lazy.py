"""A package's surface imported on first use (PEP 562).

A warm status answers from our caches: importing the readers of Cursor's files (the IDE
database, the agent graph) before it would be a large share of its time (bench/README.md,
"Package surfaces"). Such a package writes its surface as an eager one does, its imports and
`__all__`, with the imports under `if TYPE_CHECKING:`; `lazy_surface` reads where each name
lives from that block, so the type checker's view is the one place the surface is declared.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def surface_imports(source: str) -> dict[str, tuple[str, str]]:
    """Each name the `if TYPE_CHECKING:` block of a package's source binds → (its module, its
    name there)."""
    where: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imported in node.body:
                if not isinstance(imported, ast.ImportFrom) or imported.module is None:
                    raise TypeError(f"not a `from module import name`: {ast.unparse(imported)}")
                for alias in imported.names:
                    where[alias.asname or alias.name] = (imported.module, alias.name)
    return where


def lazy_surface(package: str) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: each name its `TYPE_CHECKING` block imports,
    imported from its module when first asked for, then kept in the package."""
    module_of: dict[str, tuple[str, str]] = {}

    def __getattr__(name: str) -> Any:
        if not module_of:  # read on first use: a status that asks for none never parses it
            init = sys.modules[package].__file__
            assert init is not None
            module_of.update(surface_imports(Path(init).read_text(encoding="utf-8")))
        if name not in module_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, original = module_of[name]
        value = getattr(importlib.import_module(module), original)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
