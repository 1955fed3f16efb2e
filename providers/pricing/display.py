"""Display names of models, by rule (docs/pricing.md, "Display names").

A model id is read as a family and version as people say them ("Opus 4.7", "GPT-5.1 Codex",
"Gemini 2.5 Pro"), then its mode and effort parts in parentheses ("Thinking" first, then the
effort, then other modes such as `fast` or `preview`, in the id's order). Release dates and
cloud spellings (`us.anthropic.…-v1`, `anthropic/…`) name the same model and are dropped, so
ids of one model and variant share a name; ids that differ in mode or effort keep distinct
names. An id no rule reads is shown as it is. A small table holds the exceptions.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from codeburn.providers.pricing.prices import CLOUD_PREFIX, CLOUD_VERSION

# Names no rule gives: Cursor's own modes and the ids people know by another name.
_EXCEPTIONS: Final = {
    "cursor-auto": "Cursor (auto)",
    "auto": "Cursor (auto)",
    "default": "Cursor (auto)",
    "agent_review": "Cursor (review agent)",
    "composer-1": "Composer 1",
    "gpt-5": "GPT-5",
    "grok-code-fast-1": "Grok Code Fast",
}
# Effort words, shown as written (after "Thinking").
_EFFORTS: Final = frozenset({"minimal", "low", "medium", "high", "xhigh", "max", "extra"})
# Other mode words: shown as written, or as spelt here.
_MODES: Final = {
    "fast": "fast",
    "1m": "1M",
    "preview": "preview",
    "exp": "experimental",
    "reasoning": "reasoning",
    "latest": "latest",
}
_THINKING: Final = "thinking"
# Families named by a word (or two) before a version: how people write them.
_WORD_FAMILIES: Final = {
    "composer": "Composer",
    "gemini": "Gemini",
    "grok": "Grok",
    "kimi": "Kimi",
    "deepseek": "DeepSeek",
    "code-supernova": "Code Supernova",
}
# A version as written in an id: `4`, `4.5`, `10`, `0.1` (never `05` or `0709`: dates).
_VERSION: Final = re.compile(r"(?:0|[1-9]\d?)(?:\.\d+)*")
_GPT: Final = re.compile(r"gpt-(\d+(?:\.\d+)*[a-z]?)")
_O_SERIES: Final = re.compile(r"o\d+")
# Model words after a GPT version ("GPT-5.1 Codex Max" is a model of its own, not an effort).
_GPT_WORDS: Final = frozenset({"codex", "mini", "nano", "pro", "chat", "turbo", "instant"})


def _is_date(token: str) -> bool:
    """A part of a release date after the name: `20250929`, `0709`, `05`-`06`, `03`-`25`."""
    return token.isdigit() and len(token) >= 2


def _word(token: str) -> str:
    """`pro` → "Pro", `k2.5` → "K2.5", `4.5` stays."""
    return token[:1].upper() + token[1:]


def _modes(tokens: list[str]) -> str | None:
    """The parenthesised part ("Thinking, high, fast"), "" for none; None when a token is no
    mode or effort (the id is then no rule's)."""
    thinking, efforts, others = False, [], []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token == _THINKING:
            thinking = True
        elif token == "extra" and nxt in _EFFORTS:  # `extra-high`
            efforts.append(f"extra {nxt}")
            i += 1
        elif token in _EFFORTS:
            efforts.append(token)
        elif token == "non" and nxt in _MODES:  # `non-reasoning`
            others.append(f"non-{_MODES[nxt]}")
            i += 1
        elif token == "1" and nxt == "million":  # `code-supernova-1-million`
            others.append(_MODES["1m"])
            i += 1
        elif token in _MODES:
            others.append(_MODES[token])
        elif not _is_date(token):
            return None
        i += 1
    parts = (["Thinking"] if thinking else []) + efforts + others
    return ", ".join(dict.fromkeys(parts))


def _with_modes(name: str, rest: list[str]) -> str | None:
    modes = _modes(rest)
    if modes is None:
        return None
    return f"{name} ({modes})" if modes else name


def _claude(tokens: list[str]) -> str | None:
    """`claude-4.5-opus-high-thinking`, `claude-opus-4-7-thinking-xhigh`, `claude-3-7-sonnet`,
    `claude-sonnet-4-5-20250929`: family word and version in either order, then the modes."""
    family, version, i = "", [], 1
    while i < len(tokens):
        token = tokens[i]
        if _VERSION.fullmatch(token):
            version.extend(token.split("."))
        elif token.isalpha() and not family and token not in _EFFORTS and token != _THINKING:
            family = token
        else:
            break
        i += 1
    if not family or not version:
        return None
    return _with_modes(f"{_word(family)} {'.'.join(version)}", tokens[i:])


def _gpt(name: str) -> str | None:
    """`gpt-5.1-codex-high` → "GPT-5.1 Codex (high)", `gpt-4o` → "GPT-4o"."""
    match = _GPT.match(name)
    if match is None or (match.end() < len(name) and name[match.end()] != "-"):
        return None
    words, rest = [f"GPT-{match.group(1)}"], name[match.end() + 1 :].split("-")
    rest = [t for t in rest if t]
    while rest and (rest[0] in _GPT_WORDS or (rest[0] == "max" and words[-1] == "Codex")):
        words.append(_word(rest.pop(0)))
    return _with_modes(" ".join(words), rest)


def _is_name_word(rest: list[str]) -> bool:
    """Whether the first token still belongs to the name: a version or a word that is no
    mode, effort or date (`pro`, `flash`, `k2`, `build`)."""
    token = rest[0]
    if _VERSION.fullmatch(token):
        return not (token == "1" and rest[1:2] == ["million"])
    return not (
        token.isdigit() or token in _EFFORTS or token in _MODES or token in (_THINKING, "non")
    )


def _named_family(name: str) -> str | None:
    """`composer-2.5-fast`, `gemini-2.5-pro-preview-05-06`, `grok-4-0709`, `o3-pro`,
    `kimi-k2-instruct`: the family's spelling, its version and model words, then the modes."""
    for prefix, spelt in _WORD_FAMILIES.items():
        if name == prefix or name.startswith(prefix + "-"):
            words, rest = [spelt], name[len(prefix) + 1 :].split("-")
            break
    else:
        first, _, tail = name.partition("-")
        if not _O_SERIES.fullmatch(first):
            return None
        words, rest = [first], tail.split("-")
    rest = [t for t in rest if t]
    while rest and _is_name_word(rest):
        words.append(_word(rest.pop(0)))
    return _with_modes(" ".join(words), rest)


def _stripped(model: str) -> str:
    """The id without provider paths, cloud spellings or Cursor's `cursor-` prefix."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if CLOUD_PREFIX.match(name):
        name = CLOUD_VERSION.sub("", CLOUD_PREFIX.sub("", name))
    if name.startswith("cursor-") and name not in _EXCEPTIONS:
        name = name.removeprefix("cursor-")
    return name


@lru_cache(maxsize=4096)
def display_name(model: str) -> str:
    """The name a person reads for a model id (docs/pricing.md); an unknown id unchanged."""
    exception = _EXCEPTIONS.get(model.strip().lower())
    if exception is not None:
        return exception
    name = _stripped(model)
    if name in _EXCEPTIONS:
        return _EXCEPTIONS[name]
    if name.startswith("claude-"):
        found = _claude(name.split("-"))
    elif name.startswith("gpt-"):
        found = _gpt(name)
    else:
        found = _named_family(name)
    return found or model
