"""One conversation's bubbles → priced calls (docs/local-data.md#input-source, #calls-emitted)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import chain
from operator import attrgetter
from typing import Any, Final, NamedTuple

from codeburn.providers.agent import StreamRequest, Turn
from codeburn.providers.calls import (
    CHARS_PER_TOKEN,
    CURSOR,
    UNMAPPED_PROJECT,
    Call,
    estimate_tokens,
)
from codeburn.providers.gauges import first_gauge
from codeburn.providers.localtime import LATEST_MS, is_date_ms
from codeburn.providers.pricing import canonical_model, cost_of, rates_for

USER_TYPE: Final = 1


class Bubble(NamedTuple):
    """A kept bubble. A tuple: a database holds hundreds of thousands, and the scan builds
    them positionally (`rows.BubbleScan.add`)."""

    rowid: int
    key: str  # the call key (`cursor:bubble:<row key>`), built by SQLite, shared with the call
    type: Any  # 1: the user's (USER_TYPE), else a reply
    ts: int  # epoch ms
    input_tokens: int
    output_tokens: int
    model: str | None
    chars: int  # characters of its text
    languages: str | None  # its code blocks' languages (a JSON array)
    request_id: str | None


class ComposerMeta(NamedTuple):
    """What the emitter reads of a conversation's composerData (`sql.composer_meta`), as
    stored: any JSON value, checked where used."""

    created: Any  # createdAt
    used_tokens: Any  # promptTokenBreakdown.totalUsedTokens
    context_tokens: Any  # contextTokensUsed
    name: Any

    @classmethod
    def of(cls, fields: Sequence[Any] | None) -> ComposerMeta | None:
        """The meta in `sql.composer_meta`'s fields (missing ones: None)."""
        if fields is None:
            return None
        return cls(*fields[:4], *(None,) * (4 - len(fields[:4])))


_IN_OF: Final = attrgetter("input_tokens")
_OUT_OF: Final = attrgetter("output_tokens")
_MODEL_OF: Final = attrgetter("model")

# tuple.__new__ makes a NamedTuple without its constructor's Python-level call (hot loops).
_new_tuple: Final = tuple.__new__

SOURCE_BUBBLE_TOKENS: Final = "bubbleTokens"
SOURCE_METER: Final = "meter"
SOURCE_STREAM: Final = "stream"
SOURCE_TEXT: Final = "text"


def as_int(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value > 0:
        return int(value)
    return 0


@dataclass(slots=True)
class Conversation:
    """Everything the emitter needs about one conversation."""

    composer_id: str
    bubbles: list[Bubble]  # ascending ROWID
    meta: ComposerMeta | None
    stream: Sequence[StreamRequest]  # joined agent requests, in stream order
    project: str = UNMAPPED_PROJECT
    fallback_model: str | None = None  # composerData.modelConfig (Cursor 3.x)


def choose_source(conv: Conversation) -> tuple[str, int]:
    """The single input source of a conversation, and the input it credits."""
    bubbles = conv.bubbles
    if any(map(_IN_OF, bubbles)) or any(map(_OUT_OF, bubbles)):
        return SOURCE_BUBBLE_TOKENS, 0
    if conv.meta is not None:
        meter, _ = first_gauge(as_int(conv.meta.used_tokens), as_int(conv.meta.context_tokens))
        if meter > 0:
            return SOURCE_METER, meter
    stream_chars = sum(r.user_chars + r.context_chars for r in conv.stream)
    if stream_chars > 0:
        return SOURCE_STREAM, estimate_tokens(stream_chars)
    return SOURCE_TEXT, 0


def skips_a_gauge(conv: Conversation) -> bool:
    """Whether `choose_source` passed over a meter above the bound (counted, see gauges)."""
    if conv.meta is None or any(map(_IN_OF, conv.bubbles)) or any(map(_OUT_OF, conv.bubbles)):
        return False
    return first_gauge(as_int(conv.meta.used_tokens), as_int(conv.meta.context_tokens))[1]


@lru_cache(maxsize=4096)
def _tools_of(languages: str | None) -> tuple[str, ...]:
    """Tools of a bubble from its code blocks' languages (a JSON array, see cursor_scan)."""
    if not languages:
        return ()
    # Split like the comma-joined list this replaced, so odd ids keep their old meaning.
    pieces = [p for lang in json.loads(languages) if isinstance(lang, str) for p in lang.split(",")]
    langs = [lang for lang in dict.fromkeys(pieces) if lang and lang != "plaintext"]
    return ("cursor:edit", *(f"lang:{lang}" for lang in langs)) if langs else ()


def _stream_tools(conv: Conversation) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The joined requests' tools and commands, each once, in first-seen order."""
    stream = conv.stream
    if not stream:
        return (), ()
    tools = dict.fromkeys(chain.from_iterable([r.tools for r in stream]))
    commands = dict.fromkeys(chain.from_iterable([r.commands for r in stream]))
    return tuple(tools), tuple(commands)


def _call(
    key: str,
    model: str,
    conv: Conversation,
    ts: int,
    inp: int,
    out: int,
    tools: tuple[str, ...] = (),
    commands: tuple[str, ...] = (),
) -> Call:
    cost, priced = cost_of(model, inp, out)
    return Call(
        key, CURSOR, model, conv.project, conv.composer_id, ts, inp, out, 0, 0, cost, True,
        False, priced, tools, commands,
    )  # fmt: skip


def _bubble_calls(conv: Conversation, fallback: str, text_source: bool) -> list[Call]:
    """One call per bubble with tokens (the hot loop of a parse: kept lean on purpose)."""
    calls: list[Call] = []
    append = calls.append
    project, session = conv.project, conv.composer_id
    # Bubble model name → (shown model, input rate, output rate, priced), once per name.
    models: dict[str | None, tuple[str, float, float, bool]] = {}
    per_token = CHARS_PER_TOKEN
    for _rowid, key, typ, ts, inp, out, name, chars, langs, _request in conv.bubbles:
        if not inp and not out:
            if typ == USER_TYPE:
                if not text_source or chars <= 0:
                    continue
                inp = -(-chars // per_token)  # noqa: PLW2901 (estimate_tokens, inlined)
            elif chars > 0:
                out = -(-chars // per_token)  # noqa: PLW2901
            else:
                continue
        entry = models.get(name)
        if entry is None:
            model = canonical_model(name) if name else fallback
            rates = rates_for(model)
            entry = models[name] = (
                (model, rates.input, rates.output, True)
                if rates is not None
                else (model, 0.0, 0.0, False)
            )
        model, rate_in, rate_out, priced = entry
        # The cost is cost_of(model, inp, out): the cache terms it adds are exact zeros.
        append(
            Call(
                key,
                CURSOR,
                model,
                project,
                session,
                ts,
                inp,
                out,
                0,
                0,
                inp * rate_in + out * rate_out,
                True,
                False,
                priced,
                _tools_of(langs) if langs else (),
                (),
            )
        )
    return calls


def _served_bubbles(conv: Conversation) -> list[Bubble]:
    """The bubbles with the model that served them where a local file names it
    (docs/local-data.md#calls-emitted):
    the model inside the content blocks of the joined request a bubble belongs to (the latest
    request id seen in ROWID order), else the `-fast` variant of a bubble's selected model when
    the composer's model config selects it with the `fast` parameter."""
    served = {r.request_id: r.served for r in conv.stream if r.served}
    fallback = conv.fallback_model
    fast = fallback if fallback and fallback.endswith("-fast") else None
    if not served and fast is None:
        return conv.bubbles
    out: list[Bubble] = []
    current: str | None = None
    for bubble in conv.bubbles:
        request = bubble.request_id
        if request is not None:
            current = request
        name = (served.get(current) if current is not None else None) or bubble.model
        if fast is not None and name is not None and f"{name}-fast" == fast:
            name = fast
        if name != bubble.model:
            bubble = bubble._replace(model=name)  # noqa: PLW2901
        out.append(bubble)
    return out


def emit_conversation(conv: Conversation) -> list[Call]:
    """Calls of one conversation: per bubble, plus one conversation-level input record."""
    source, credited_input = choose_source(conv)
    bubbles = _served_bubbles(conv)
    if bubbles is not conv.bubbles:
        conv = replace(conv, bubbles=bubbles)
    first_model = next(filter(None, map(_MODEL_OF, conv.bubbles)), None)
    stream_model = next((r.model for r in conv.stream if r.model), None) or conv.fallback_model
    latest_served = next((r.served for r in reversed(conv.stream) if r.served), None)
    calls = _bubble_calls(conv, canonical_model(first_model or stream_model), source == SOURCE_TEXT)
    tools, commands = _stream_tools(conv)
    if source in (SOURCE_METER, SOURCE_STREAM):
        # One record for the whole conversation: the latest served model wins.
        model = latest_served or first_model or stream_model
        record = _conversation_record(conv, credited_input, model)
        if record is not None:
            calls.append(_with_tools(record, tools, commands) if tools or commands else record)
    elif calls and (tools or commands):
        calls[0] = _with_tools(calls[0], (*calls[0].tools, *tools), commands)
    return calls


def _with_tools(call: Call, tools: tuple[str, ...], commands: tuple[str, ...]) -> Call:
    return replace(call, tools=tuple(dict.fromkeys(tools)), commands=commands)


def _conversation_record(conv: Conversation, input_tokens: int, model: str | None) -> Call | None:
    assistant_text = any(b.type != USER_TYPE and b.chars > 0 for b in conv.bubbles)
    output = 0 if assistant_text else estimate_tokens(sum(r.assistant_chars for r in conv.stream))
    if not input_tokens and not output:
        return None
    created = conv.meta.created if conv.meta is not None else None
    ts = int(created) if is_date_ms(created) and created > 0 else conv.bubbles[0].ts
    return _call(
        f"cursor:composer-input:{conv.composer_id}",
        canonical_model(model),
        conv,
        ts,
        input_tokens,
        output,
    )


def bubble_turns(bubbles: Sequence[Bubble]) -> tuple[Turn, ...]:
    """Turns of a conversation's bubbles (ascending ROWID): a user bubble opens one, replies
    extend it to their time. The caller leaves out conversations with inferred dates."""
    turns: list[Turn] = []
    append = turns.append
    # The open turn: its start, end and model (None: no turn yet), made a tuple once closed.
    start: Any = None
    end: Any = 0
    model: str | None = None
    models: dict[str, str] = {}
    for bubble in bubbles:
        ts = bubble.ts
        # Kept bubbles carry int times in range; anything else is checked the long way.
        if (type(ts) is not int or not 0 < ts < LATEST_MS) and (not is_date_ms(ts) or ts <= 0):
            continue
        if bubble.type == USER_TYPE:
            if start is not None:
                append(_new_tuple(Turn, (int(start), int(end), model)))
            start = end = ts
            model = None
            continue
        if start is None:
            start = end = ts
        elif ts > end:
            end = ts
        name = bubble.model
        if name:
            model = models.get(name)
            if model is None:
                model = models[name] = canonical_model(name)
    if start is not None:
        append(_new_tuple(Turn, (int(start), int(end), model)))
    return tuple(turns)
