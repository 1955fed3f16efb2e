"""The words checked on the tree itself (issue 35 item 6).

- the README stays a user's page: at most 200 lines, the two quick-start commands, and every
  `codeburn.*` setting of vscode-client/package.json in its settings table;
- the rules the code cites are the project's own: no citation of the outside contract by
  section number ("SPEC" and a section sign) in code, tests or the extension,
  and every `docs/<page>.md#<anchor>` a file names (and every link between docs pages) exists.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 200
QUICK_START = ("bash ./dev demo", "bash ./dev test")
SPEC_CITATION = "SPEC " + "\u00a7"  # spelled so that this file does not cite it

_CITATION = re.compile(r"docs/([a-z0-9-]+)\.md((?:#[a-z0-9-]+)?(?:, #[a-z0-9-]+)*)")
_DOC_LINK = re.compile(r"\]\(([a-z0-9-]+\.md)?(#[a-z0-9-]+)?\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces → `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    return {_anchor(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [ROOT / name for name in out.stdout.split()]


def _settings() -> list[str]:
    manifest = json.loads((ROOT / "vscode-client" / "package.json").read_text(encoding="utf-8"))
    sections = manifest["contributes"]["configuration"]
    sections = sections if isinstance(sections, list) else [sections]
    return [name for section in sections for name in section["properties"]]


def test_readme_is_a_page_of_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_quick_start_has_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    for command in QUICK_START:
        assert command in quick, f"the quick start lost `{command}`"
    script = (ROOT / "dev").read_text(encoding="utf-8")
    for command in QUICK_START:  # and the script still has them
        assert re.search(rf"^\s+{command.split()[-1]}\)", script, re.MULTILINE), command


def test_readme_lists_every_setting() -> None:
    table = README.read_text(encoding="utf-8").split("## Settings", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(codeburn\.[\w.]+)` \|", table, re.MULTILINE))
    assert listed == set(_settings()), "README's settings table and package.json differ"


def test_no_spec_section_citations_in_code() -> None:
    files = _tracked("*.py", "*.ts", "*.mjs")
    citing = [str(p.relative_to(ROOT)) for p in files if SPEC_CITATION in p.read_text("utf-8")]
    assert not citing, f"cite docs/<page>.md, not {SPEC_CITATION}: {citing}"


def test_every_cited_docs_anchor_exists() -> None:
    pages = {page.stem: _anchors(page) for page in DOCS.glob("*.md")}
    missing = []
    for path in _tracked("*.py", "*.ts", "*.md", "*.json"):
        if "tests/data/" in str(path):
            continue
        for m in _CITATION.finditer(path.read_text(encoding="utf-8")):
            page, anchors = m.group(1), re.findall(r"#([a-z0-9-]+)", m.group(2))
            if page not in pages or any(a not in pages[page] for a in anchors):
                missing.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert not missing, missing


def test_links_between_docs_pages_resolve() -> None:
    pages = {page.name: _anchors(page) for page in DOCS.glob("*.md")}
    broken = []
    for page in DOCS.glob("*.md"):
        for m in _DOC_LINK.finditer(page.read_text(encoding="utf-8")):
            target = m.group(1) or page.name
            anchor = (m.group(2) or "#")[1:]
            if target not in pages or (anchor and anchor not in pages[target]):
                broken.append(f"{page.name}: {m.group(0)}")
    assert not broken, broken
