"""Fills vscode-client/bundled/libs with the `codeburn` package and its pure-Python dependencies.

The package folders are copied as pyproject.toml maps them (`package-dir`, `packages`,
`package-data`), so the VSIX carries the same modules an install would. Dependencies come from
requirements-bundle.txt as py3-none-any wheels (pip refuses anything compiled). Finally the bundle
is imported with site-packages switched off, which proves it is self-contained.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

CLIENT = Path(__file__).resolve().parent.parent
ROOT = CLIENT.parent
LEFT_OUT = {"rich"}  # CLI only
PIN = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s;#]+)")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        match = PIN.match(line)
        if match:
            found[normalise(match[1])] = match[2]
    return found


def check_pins(project: dict[str, Any], requirements: Path) -> None:
    """Every runtime dependency of pyproject.toml (but rich) is in the bundle at the same pin."""
    wanted = pins(project["project"]["dependencies"])
    bundled = pins(requirements.read_text().splitlines())
    problems = [
        f"{name}=={version} (bundle has {bundled.get(name, 'nothing')})"
        for name, version in wanted.items()
        if name not in LEFT_OUT and bundled.get(name) != version
    ]
    if problems:
        sys.exit(
            "bundle_python: requirements-bundle.txt does not match pyproject.toml: "
            + ", ".join(problems)
        )


def copy_packages(project: dict[str, Any], libs: Path) -> list[str]:
    setuptools = project["tool"]["setuptools"]
    package_dir: dict[str, str] = setuptools.get("package-dir", {})
    package_data: dict[str, list[str]] = setuptools.get("package-data", {})
    packages: list[str] = setuptools["packages"]
    for package in packages:
        source = source_dir(package, package_dir)
        target = libs.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        patterns = ["*.py", *package_data.get(package, [])]
        for file in sorted(source.iterdir()):
            if file.is_file() and any(fnmatch.fnmatch(file.name, p) for p in patterns):
                shutil.copy2(file, target / file.name)
    return packages


def source_dir(package: str, package_dir: dict[str, str]) -> Path:
    """The folder of a package: its own mapping, else its parent's mapping plus the rest."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in package_dir:
            return ROOT / package_dir[prefix] / Path(*parts[cut:])
    return ROOT / Path(*parts)


def install_dependencies(requirements: Path, libs: Path, python: str) -> None:
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    target = ["--root-user-action=ignore", "--target", str(libs), "--no-deps"]
    pure = ["--only-binary=:all:", "--implementation", "py", "--python-version", "3.11"]
    subprocess.run(
        [*pip, *target, *pure, "--platform", "any", "--requirement", str(requirements)],
        check=True,
    )


def prune(libs: Path) -> None:
    for cache in libs.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    bin_dir = libs / "bin"
    if bin_dir.is_dir():
        shutil.rmtree(bin_dir)


def smoke_test(libs: Path, packages: list[str], python: str) -> None:
    """Imports the server with only the stdlib and the bundle on sys.path (-S: no site-packages)."""
    modules = [*packages, "pygls.lsp.server", "httpx", "platformdirs", "filelock"]
    if (libs / "codeburn" / "server" / "lsp" / "run.py").exists():
        modules.append("codeburn.server.lsp.run")  # the server's entry (imports the server)
    code = (
        "import importlib, sys; sys.path.insert(0, sys.argv[1]); "
        "[importlib.import_module(m) for m in sys.argv[2:]]; "
        "assert 'rich' not in sys.modules, 'the server imports rich, which is not bundled'"
    )
    subprocess.run(
        [python, "-S", "-P", "-B", "-c", code, str(libs), *modules], check=True, cwd=libs
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="Python ≥ 3.11 that runs pip")
    args = parser.parse_args()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    requirements = CLIENT / "requirements-bundle.txt"
    check_pins(project, requirements)
    libs = CLIENT / "bundled" / "libs"
    shutil.rmtree(libs, ignore_errors=True)
    libs.mkdir(parents=True)
    packages = copy_packages(project, libs)
    install_dependencies(requirements, libs, args.python)
    prune(libs)
    smoke_test(libs, packages, args.python)
    print(f"bundle_python: {len(packages)} codeburn packages and dependencies in {libs}")


if __name__ == "__main__":
    main()
