"""A decoded conversation graph → calls (estimated, priced) and the turns attribution matches."""

from __future__ import annotations

from codeburn.providers.agent.graph import Graph
from codeburn.providers.calls import Call, estimate_tokens
from codeburn.providers.conversations import Turn
from codeburn.providers.gauges import first_gauge
from codeburn.providers.localtime import valid_ms
from codeburn.providers.pricing import canonical_model, cost_of


def spread_times(known: list[int | None], lo: int | None, hi: int | None) -> list[int | None]:
    """Dates for turns: known ones kept; the others spread between their neighbours, the
    conversation's start (`lo`) and its last update (`hi`) — inferred, never the file mtime."""
    n = len(known)
    if all(t is None for t in known):
        if lo is None or hi is None or hi <= lo or n < 2:
            anchor = lo if lo is not None else hi
            return [anchor] * n
        return [lo + (hi - lo) * i // (n - 1) for i in range(n)]
    out = list(known)
    i = 0
    while i < n:
        if out[i] is not None:
            i += 1
            continue
        j = i
        while j < n and known[j] is None:
            j += 1
        k = j - i
        prev = out[i - 1] if i > 0 else None
        nxt = known[j] if j < n else None
        for step in range(k):
            if prev is not None and nxt is not None:
                out[i + step] = prev + (nxt - prev) * (step + 1) // (k + 1)
            elif nxt is not None:  # leading run: from the start up to the first known time
                start = lo if lo is not None and lo <= nxt else nxt
                out[i + step] = start + (nxt - start) * step // k
            elif prev is not None:  # trailing run: up to the last update
                end = hi if hi is not None and hi >= prev else prev
                out[i + step] = prev + (end - prev) * (step + 1) // k
        i = j
    return out


def _call(
    key: str, model: str, inp: int, out: int, ts: int, where: tuple[str, str, str],
    tools: tuple[str, ...] = (), commands: tuple[str, ...] = (),
) -> Call:  # fmt: skip
    provider, project, session = where
    cost, priced = cost_of(model, inp, out)
    return Call(
        key, provider, model, project, session, ts, inp, out, 0, 0, cost, True, False, priced,
        tools, commands,
    )  # fmt: skip


def graph_calls(
    graph: Graph,
    *,
    conversation_id: str,
    provider: str,
    project: str,
    fallback_model: str | None,
    created_ms: int | None,
    updated_ms: int | None,
    key_prefix: str,
    meter_tokens: int = 0,
) -> list[Call]:
    """Calls of a decoded conversation: one per turn (`<key_prefix><id>:<i>`), plus at most one
    meter record (`<key_prefix><id>:input`).

    As in docs/local-data.md#input-source the input source is chosen once: the meter
    (`graph.used_tokens`, else `meter_tokens` from composerData) credits input once, dated at
    the conversation's start;
    without a meter each turn's input is `estimate_tokens(user + context chars)`. Output is
    `estimate_tokens(assistant chars)` per turn. Undatable turns are left out.
    """
    lo = valid_ms(created_ms) or graph.started_ms
    hi = valid_ms(updated_ms)
    times = spread_times([t.timestamp_ms for t in graph.turns], lo, hi)
    meter, _ = first_gauge(graph.used_tokens, meter_tokens)  # a meter above 10 M: none
    where = (provider, project, conversation_id)
    calls: list[Call] = []
    for i, (turn, ts) in enumerate(zip(graph.turns, times, strict=True)):
        inp = 0 if meter else estimate_tokens(turn.user_chars + turn.context_chars)
        out = estimate_tokens(turn.assistant_chars)
        if ts is None or not (inp or out):
            continue
        model = canonical_model(turn.served or turn.model or fallback_model)
        key = f"{key_prefix}{conversation_id}:{i}"
        calls.append(_call(key, model, inp, out, ts, where, turn.tools, turn.commands))
    dated = [t for t in times if t is not None]
    meter_ts = lo if lo is not None else dated[0] if dated else hi
    if meter and meter_ts is not None:
        # One record for the whole conversation: the latest served model, else the first named.
        served = next((t.served for t in reversed(graph.turns) if t.served), None)
        first = next((t.model for t in graph.turns if t.model), None)
        model = canonical_model(served or first or fallback_model)
        key = f"{key_prefix}{conversation_id}:input"
        calls.append(_call(key, model, meter, 0, meter_ts, where))
    return calls


def graph_turns(graph: Graph | None) -> tuple[Turn, ...]:
    """Turns of a decoded graph whose time is recorded (turn timing or message times)."""
    if graph is None:
        return ()
    out: list[Turn] = []
    for turn in graph.turns:
        start = turn.timestamp_ms
        if start is None or start <= 0:
            continue
        end = turn.end_ms if turn.end_ms is not None and turn.end_ms >= start else start
        name = turn.served or turn.model
        # (tuple.__new__: no constructor call, see `ide.emit.bubble_turns`)
        out.append(tuple.__new__(Turn, (start, end, canonical_model(name) if name else None)))
    return tuple(out)
