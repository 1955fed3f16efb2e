"""The house rules of the code layout (issue 15), checked on the tree itself.

- pyproject.toml lists every package (the VSIX bundles exactly that list: one left off would
  silently drop out of the extension);
- every package names its public surface with `__all__`, and each name in it exists;
- code outside a package imports only from its surface: the outermost package that holds the
  name but not the importer (tests, the bench and the sample writers may reach internals).
The layers and cycles are import-linter's (`.importlinter`, run by ./dev test).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from codeburn.providers.lazy import surface_imports

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("server", "providers", "cache", "sync")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return "codeburn." + ".".join(parts)


def _tree_packages() -> set[str]:
    return {_module_name(init) for layer in LAYERS for init in (ROOT / layer).rglob("__init__.py")}


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}


def test_pyproject_lists_every_package_of_the_tree() -> None:
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(listed["packages"]) == _tree_packages()
    assert len(listed["packages"]) == len(set(listed["packages"]))


@pytest.mark.parametrize("package", sorted(_tree_packages()))
def test_every_package_names_its_surface(package: str) -> None:
    module = importlib.import_module(package)
    surface = getattr(module, "__all__", None)
    assert isinstance(surface, list), f"{package} has no __all__"
    assert len(surface) == len(set(surface))
    missing = [name for name in surface if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what it does not define: {missing}"


def _surface_for(importer: str, target: str) -> str | None:
    """The package an import of `target` by `importer` must name, or None when either may."""
    if importer.startswith("codeburn.providers.samples"):
        return None
    if target.startswith("codeburn.providers.samples."):
        return "codeburn.providers.samples"
    parts = target.split(".")
    for cut in range(2, len(parts)):
        package = ".".join(parts[:cut])
        if importer != package and not importer.startswith(package + "."):
            return package
    return None


def test_code_outside_a_package_imports_only_from_its_surface() -> None:
    modules, packages = _modules(), _tree_packages()
    wrong: list[str] = []
    for importer, path in modules.items():
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                "codeburn."
            ):
                continue
            target = node.module or ""
            if target in packages:
                # `from package import submodule` across a surface is a way around it.
                subs = [a.name for a in node.names if f"{target}.{a.name}" in modules]
                if subs and _surface_for(importer, f"{target}.{subs[0]}") not in (None, target):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {subs}")
                continue
            surface = _surface_for(importer, target)
            if surface is not None:
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} {target} -> {surface}")
    assert not wrong, "imports around a package's surface:\n" + "\n".join(wrong)


def test_the_rule_itself() -> None:
    usage, paths = "codeburn.server.service.usage", "codeburn.providers.ide.paths"
    assert _surface_for(usage, paths) == "codeburn.providers"
    assert _surface_for("codeburn.providers.local", paths) == "codeburn.providers.ide"
    assert _surface_for("codeburn.providers.ide.reader", paths) is None
    assert _surface_for("codeburn.providers.ide.reader", "codeburn.providers.calls") is None
    assert _surface_for(usage, "codeburn.providers.samples.generator") == (
        "codeburn.providers.samples"
    )


def _declared(init: Path) -> tuple[set[str], list[str], list[ast.Call]]:
    """(the names a package `__init__` imports from our modules, at its top or under
    `if TYPE_CHECKING:`; its `__all__`; its calls of `lazy_surface`)."""
    imported: set[str] = set()
    surface: list[str] = []
    tree = ast.parse(init.read_text())
    for node in tree.body:
        body = [node]
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            body = node.body
        for stmt in body:
            module = stmt.module if isinstance(stmt, ast.ImportFrom) else None
            if (module or "").startswith("codeburn."):
                imported |= {a.asname or a.name for a in stmt.names} - {"lazy_surface"}
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            surface = list(ast.literal_eval(node.value))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "lazy_surface"
    ]
    return imported, surface, calls


INITS = {
    _module_name(init): init for layer in LAYERS for init in (ROOT / layer).rglob("__init__.py")
}
LAZY = {package for package, init in INITS.items() if _declared(init)[2]}


@pytest.mark.parametrize("package", sorted(INITS))
def test_a_package_declares_its_surface_once(package: str) -> None:
    # By its imports and `__all__`, as any Python package (ruff and mypy hold the two equal);
    # a lazy package's imports are read by `lazy_surface`, never written again as a map.
    imported, surface, calls = _declared(INITS[package])
    assert imported <= set(surface), package
    for call in calls:
        assert [ast.unparse(a) for a in call.args] == ["__name__"] and not call.keywords, package


def test_a_lazy_surface_is_the_one_the_type_checker_sees() -> None:
    assert {
        "codeburn.providers.agent",
        "codeburn.providers.agents",
        "codeburn.providers.ide",
        "codeburn.sync",
    } == LAZY
    for package in LAZY:
        module = importlib.import_module(package)
        where = surface_imports(INITS[package].read_text())
        assert sorted(where) == sorted(module.__all__), package
        for name, (source, original) in where.items():
            assert getattr(module, name) is getattr(importlib.import_module(source), original)
        with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
            _ = module.nothing_here


def test_surface_imports_reads_only_the_type_checking_block() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from codeburn.providers.lazy import lazy_surface\n"
        "if TYPE_CHECKING:\n"
        "    from a.b import C, d as e\n"
        "    from a.f import g\n"
        "else:\n"
        "    __getattr__ = lazy_surface(__name__)\n"
    )
    assert surface_imports(source) == {"C": ("a.b", "C"), "e": ("a.b", "d"), "g": ("a.f", "g")}
    with pytest.raises(TypeError, match="import a"):
        surface_imports("if TYPE_CHECKING:\n    import a\n")


def test_the_command_line_starts_without_the_readers_of_cursors_files() -> None:
    # A warm status, and the language server's first one, answer from our caches: the database
    # and graph readers are imported by the first read that needs them (codeburn.providers.lazy).
    probe = (
        "import sys, codeburn.server.cli.main, codeburn.server.service, codeburn.cache\n"
        "import codeburn.server.lsp.bootstrap, codeburn.server.lsp.status\n"
        "import codeburn.server.lsp.settings\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    readers = {
        "codeburn.providers.agent.graph",
        "codeburn.providers.agent.stream",
        "codeburn.providers.ide.reader",
        "codeburn.providers.ide.layout3.reader",
        "codeburn.providers.ide.layout3.blob_scan",
        "codeburn.providers.agents.reader",  # (a command with no such logs never imports it)
    }
    assert "codeburn.providers.local" in loaded and not readers & loaded
