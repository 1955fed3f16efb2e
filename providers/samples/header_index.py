"""A bubbles profile as Cursor 3.x leaves it for a user whose history is still bubbles.

Every Cursor since 3.0 writes the global `ItemTable['composer.composerHeaders']`, so a user who
upgraded has that index over old `_v` bubble conversations and a JSON agent stream, and often no
`conversationState` root at all. `add_header_index` turns a profile written by
`generate_sample_profile` into that: the header key listing every conversation, and optionally
root-only Cursor 3.x conversations (their blobs and composerData rows) for a share of them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from codeburn.providers.samples.cursor3 import (
    Cursor3Spec,
    _Cursor3Sample,
    _prompts,
    _turn_specs,
)
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.generator import MODELS
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.providers.samples.titles import sample_title


@dataclass(slots=True)
class HeaderIndexInfo:
    listed: int = 0  # conversations in the ItemTable headers
    roots: int = 0  # root-only conversations added
    turns: int = 0  # their turns
    blobs: int = 0  # agentKv blob rows they added


def _composer_times(root: Path) -> list[tuple[str, int]]:
    """(composer id, createdAt) of every composerData row of the profile, in key order."""
    writer = ProfileWriter(root)
    try:
        rows = writer.conn.execute(
            "SELECT substr(key, 14), value FROM cursorDiskKV"
            " WHERE key >= 'composerData:' AND key < 'composerData;' ORDER BY key"
        ).fetchall()
    finally:
        writer.conn.close()
    out: list[tuple[str, int]] = []
    for cid, value in rows:
        created = json.loads(value).get("createdAt")
        out.append((str(cid), int(created) if isinstance(created, int) else 0))
    return out


def add_header_index(
    root: Path,
    *,
    seed: int,
    now_ms: int,
    days: int,
    roots: int = 0,
    turns: tuple[int, int] = (20, 20),
) -> HeaderIndexInfo:
    """Add the ItemTable header key (every conversation of the profile, plus `roots` root-only
    conversations of `turns` turns, written after the bubbles) to the profile under `root`."""
    info = HeaderIndexInfo()
    headers = [
        Header(cid, created_ms=created or None, updated_ms=created or None)
        for cid, created in _composer_times(root)
    ]
    spec = Cursor3Spec(seed=seed, conversations=roots, turns=turns, days=days, classic=0)
    sample = _Cursor3Sample(spec, now_ms)
    with ProfileWriter(root, bulk=True) as writer:
        before = _blob_count(writer)
        ide = Cursor3Writer(writer, header_columns=None)
        starts = []
        for index in range(roots):
            rng = sample.rng(f"headers/{index}")
            starts.append((sample.start(rng, recent=False), index, rng))
        for start, index, rng in sorted(starts, key=lambda s: s[:2]):
            header, written = _root_conversation(sample, ide, rng, start, index)
            headers.append(header)
            info.turns += written
        ide.item_headers(headers)
        writer.flush()
        info.blobs = _blob_count(writer) - before
    info.listed = len(headers)
    info.roots = roots
    return info


def _root_conversation(
    sample: _Cursor3Sample, ide: Cursor3Writer, rng: random.Random, start: int, index: int
) -> tuple[Header, int]:
    """One root-only conversation with timed turns and a prompt history (kind "root"), and
    its number of turns."""
    cid = sample.uid(rng)
    turns = sample.turns(rng, start)
    model = rng.choice(MODELS)
    updated = turns[-1].ts + 5_000
    meter = sum(len(t.user) + sum(map(len, t.results)) for t in turns) // 3
    ide.conversation(
        cid,
        _turn_specs(turns, "root"),
        prompts=_prompts(turns, model),
        used_tokens=meter,
        started_ms=start,
        created_ms=start,
        updated_ms=updated,
        model=model,
        version=18,
    )
    name = sample_title(sample.spec.seed, "roots", index)
    return Header(cid, created_ms=start, updated_ms=updated, name=name), len(turns)


def _blob_count(writer: ProfileWriter) -> int:
    writer.flush()
    row = writer.conn.execute(
        "SELECT count(*) FROM cursorDiskKV WHERE key >= 'agentKv:blob:' AND key < 'agentKv:blob;'"
    ).fetchone()
    return int(row[0])
