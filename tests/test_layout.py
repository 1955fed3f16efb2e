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
import tomllib
from pathlib import Path

import pytest

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
