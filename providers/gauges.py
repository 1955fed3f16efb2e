"""The context meter's plausibility bound (docs/local-data.md#input-source).

`totalUsedTokens` / `contextTokensUsed` of composerData and a conversation graph's
`used_tokens` are a gauge of the context size, and context windows are at most 2 M tokens: a
value above 10 M is not a gauge (a damaged row, `2^53 - 1`, `10^30`). It is skipped — the next
input source applies — and counted, never priced (a meter of 2^53 - 1 read as $11.26 B).
"""

from __future__ import annotations

from typing import Final

MAX_GAUGE_TOKENS: Final = 10_000_000


def first_gauge(*values: int) -> tuple[int, bool]:
    """The first positive value that is a gauge, and whether one above the bound was skipped."""
    skipped = False
    for value in values:
        if value > MAX_GAUGE_TOKENS:
            skipped = True
        elif value > 0:
            return value, skipped
    return 0, skipped


def skipped_gauge_note(count: int) -> str:
    noun = "meter" if count == 1 else "meters"
    return f"skipped {count} Cursor context {noun} above 10 M tokens (not a context size)"
