"""Parsed agent transcripts and CLI stores, per file and keyed on its size + mtime
(docs/caches.md#per-file-caches).

One file for one Cursor home: `{"version", "home", "entries": {path: entry}}`. The entries are
the reader's own JSON form; a file that is missing, corrupt or for another home is a miss and
is rebuilt silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from codeburn.cache.files import EncodedItems, json_with, locked, read_json, write_cache_text
from codeburn.providers import RULES

# 2: turn rows carry the served model (issue 16); 3: their end (issue 17); 4: JSONL lines end at
# `\n` only (see `home.memo.MEMO_VERSION`)
# The layout; the parse rules that wrote it are the rules identity inside
# (docs/caches.md#rules-identity).
VERSION: Final = 4
FILE: Final = f"cursor-agent-files.v{VERSION}.json"
# Entries are the reader's: a changed file gets a new entry, an unchanged one keeps its object.
_ENTRY_TEXTS: Final = EncodedItems()


def agent_files_path(cache_dir: Path) -> Path:
    return cache_dir / FILE


def load_agent_files(cache_dir: Path, home: str) -> dict[str, Any]:
    data = read_json(agent_files_path(cache_dir))
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("home") != home:
        return {}
    if data.get("rules") != RULES:
        return {}  # parsed by other rules: read again
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def save_agent_files(cache_dir: Path, home: str, entries: dict[str, Any]) -> None:
    path = agent_files_path(cache_dir)
    texts = _ENTRY_TEXTS.texts(entries.values())
    members = ",".join(f"{json.dumps(p)}:{t}" for p, t in zip(entries, texts, strict=True))
    fields = {"version": VERSION, "rules": RULES, "home": home}
    head = json_with(fields, "entries", f"{{{members}}}")
    with locked(path):
        # No fsync: what the files held when read, read again when this copy is lost or torn.
        write_cache_text(path, head, durable=False)
