"""Parsed agent transcripts remembered by content, in a file that outlives cache versions.

A transcript's turns are a function of its bytes alone (and of being `.txt` or `.jsonl`):
`parse_jsonl`/`parse_txt` read nothing else. So the memo keys them by the sha256 of those
bytes, and what it says stays true for the same bytes wherever the file is and whenever it
was written: no identity (size, mtime, inode) to trust, no file "written just now" to read
again, and a home whose agent-files cache was dropped (a version bump of it) or whose folder
moved hashes its files instead of parsing them again, which costs far more.

The hash is taken of the very bytes that are parsed, in one read, so a key never names turns
of other bytes. `MEMO_VERSION` is the memo's layout; the rules identity it also carries
(`providers.rules`) changes with any change of the deriving code, so a parse rule changed makes
it no memo. It holds counts, tool and command names
per turn, keyed by digests: never a path, a text or a command line. It holds the transcripts
of the last read only (its size follows the home), at most MAX_ENTRIES of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from codeburn.providers.framing import framed, unframed
from codeburn.providers.rules import RULES

# 1: turn rows of `reader.turn_row` (issue 17's nine fields); 2: JSONL lines end at `\n` only
# (a line holding U+2028, U+2029 or U+0085 in a string was cut there and skipped).
MEMO_VERSION: Final = 2
MAX_ENTRIES: Final = 200_000
MAX_BYTES: Final = 256 * 1024 * 1024
_MAGIC: Final = b"codeburn-agent-memo\n"

Rows = list[list[Any]]


def content_key(data: bytes, *, legacy: bool) -> str:
    """The memo key of a transcript's bytes: its kind (`t` legacy `.txt`, `j` `.jsonl`) and
    their sha256."""
    return ("t" if legacy else "j") + hashlib.sha256(data).hexdigest()


class MemoEncoder:
    """`memo_bytes`, keeping each entry's JSON text while its rows are the same list: a
    long-lived reader writes the memo again whenever a transcript changed, the others not."""

    def __init__(self) -> None:
        self._texts: dict[str, tuple[Rows, str]] = {}

    def encode(self, turns: Mapping[str, Rows]) -> bytes:
        """The memo's file content: a magic line, the CRC-32 of the body, the body (JSON)."""
        texts: dict[str, tuple[Rows, str]] = {}
        members: list[str] = []
        for key, rows in list(turns.items())[:MAX_ENTRIES]:
            kept = self._texts.get(key)
            if kept is None or kept[0] is not rows:
                kept = (rows, json.dumps(rows, separators=(",", ":"), ensure_ascii=False))
            texts[key] = kept
            members.append(f"{json.dumps(key)}:{kept[1]}")
        self._texts = texts
        head = f'"version":{MEMO_VERSION},"rules":"{RULES}"'
        text = f'{{{head},"turns":{{{",".join(members)}}}}}'
        return framed(_MAGIC, text.encode("utf-8", "surrogatepass"))


def memo_bytes(turns: Mapping[str, Rows]) -> bytes:
    """The memo's file content for these keys and turn rows."""
    return MemoEncoder().encode(turns)


def read_memo(data: bytes | None) -> dict[str, Rows] | None:
    """Key → turn rows; None unless the content is intact and of this version. The rows are
    checked where they are used (`reader.turn_from_row`): a row that is no turn is a miss."""
    parsed = unframed(_MAGIC, data, MAX_BYTES)
    if type(parsed) is not dict or parsed.get("version") != MEMO_VERSION:
        return None
    if parsed.get("rules") != RULES:
        return None  # turns parsed by other rules
    turns = parsed.get("turns")
    if type(turns) is not dict:
        return None
    return {k: v for k, v in turns.items() if type(v) is list}
