"""One conversation's bubbles → priced calls (docs/local-data.md#input-source, #calls-emitted)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any, Final

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

# A kept bubble: (rowid, call key, type, epoch ms, input tokens, output tokens, model, text
# chars, languages, request id). Tuples, not objects: a database holds hundreds of thousands.
# The call key (`cursor:bubble:<row key>`) is built by SQLite and shared with the call.
Bubble = tuple[int, str, Any, int, int, int, str | None, int, str | None, str | None]
B_ROWID: Final = 0
B_KEY: Final = 1
B_TYPE: Final = 2
B_TS: Final = 3
B_IN: Final = 4
B_OUT: Final = 5
B_MODEL: Final = 6
B_CHARS: Final = 7
B_LANGS: Final = 8
B_REQ: Final = 9

_IN_OF: Final = itemgetter(B_IN)
_OUT_OF: Final = itemgetter(B_OUT)
_MODEL_OF: Final = itemgetter(B_MODEL)

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
    meta: tuple[Any, ...] | None  # composerData (createdAt, totalUsedTokens, context, name)
    stream: Sequence[StreamRequest]  # joined agent requests, in stream order
    project: str = UNMAPPED_PROJECT
    fallback_model: str | None = None  # composerData.modelConfig (Cursor 3.x)


def choose_source(conv: Conversation) -> tuple[str, int]:
    """The single input source of a conversation, and the input it credits."""
    bubbles = conv.bubbles
    if any(map(_IN_OF, bubbles)) or any(map(_OUT_OF, bubbles)):
        return SOURCE_BUBBLE_TOKENS, 0
    if conv.meta is not None:
        meter, _ = first_gauge(as_int(conv.meta[1]), as_int(conv.meta[2]))
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
    return first_gauge(as_int(conv.meta[1]), as_int(conv.meta[2]))[1]


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
        request = bubble[B_REQ]
        if request is not None:
            current = request
        name = (served.get(current) if current is not None else None) or bubble[B_MODEL]
        if fast is not None and name is not None and f"{name}-fast" == fast:
            name = fast
        if name != bubble[B_MODEL]:
            bubble = (*bubble[:B_MODEL], name, *bubble[B_MODEL + 1 :])  # noqa: PLW2901
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
    assistant_text = any(b[B_TYPE] != USER_TYPE and b[B_CHARS] > 0 for b in conv.bubbles)
    output = 0 if assistant_text else estimate_tokens(sum(r.assistant_chars for r in conv.stream))
    if not input_tokens and not output:
        return None
    created = conv.meta[0] if conv.meta is not None else None
    ts = int(created) if is_date_ms(created) and created > 0 else conv.bubbles[0][B_TS]
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
        ts = bubble[B_TS]
        # Kept bubbles carry int times in range; anything else is checked the long way.
        if (type(ts) is not int or not 0 < ts < LATEST_MS) and (not is_date_ms(ts) or ts <= 0):
            continue
        if bubble[B_TYPE] == USER_TYPE:
            if start is not None:
                append((int(start), int(end), model))
            start = end = ts
            model = None
            continue
        if start is None:
            start = end = ts
        elif ts > end:
            end = ts
        name = bubble[B_MODEL]
        if name:
            model = models.get(name)
            if model is None:
                model = models[name] = canonical_model(name)
    if start is not None:
        append((int(start), int(end), model))
    return tuple(turns)
