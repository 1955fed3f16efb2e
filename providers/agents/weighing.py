"""Which copy of a Claude Code request counts, and whose session it is: `claude_calls` over
every file's records, or `ClaudeWeighing` with the files given one at a time (the rules:
docs/other-tools.md)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from typing import Final

from codeburn.providers.agents.claude_code import (
    COPIES_SPAN_MS,
    UNKNOWN_PROJECT,
    ClaudeCalls,
    ClaudeFile,
    ClaudeRequest,
    agent_id_of,
    call_key,
    call_model,
    note_title,
    parent_session_of,
    session_of,
)
from codeburn.providers.calls import CLAUDE_CODE, Call, CallRun, SessionRun, SessionRuns
from codeburn.providers.ide import path_project
from codeburn.providers.pricing import claude_cost

_RANK_BITS: Final = 32  # a copy's rank: its file's index, then its place in the file
# A weighed request's numbers, `_WIDTH` per slot of `ClaudeWeighing.numbers`: its chosen copy's
# time and tokens, that copy's rank, and the rank of its first copy (the calls' order).
_TIME, _INPUT, _OUTPUT, _READ, _WRITE_5M, _WRITE_1H, _CHOSEN_AT, _FIRST_AT = range(8)
_WIDTH: Final = 8


def claude_calls(files: Iterable[ClaudeFile], since_ms: int | None = None) -> ClaudeCalls:
    """One call per API request over every file: of a request's copies, the one with the
    largest output; a `progress` copy only when its sub-agent's own file is absent.

    `since_ms`: only the calls at or after it are made (a refresh wants the days not sealed
    yet); the copies of one request lie seconds apart, so those of the day before still
    compete, and a session's folder is still where it started."""
    files = list(files)
    weighing = ClaudeWeighing([f.path for f in files], since_ms)
    for index, file in enumerate(files):
        weighing.add(index, file)
    return weighing.result()


class ClaudeWeighing:
    """`claude_calls` with the files given one at a time, in any order: `index` is a file's
    place among `paths`, the order `claude_calls` weighs them in (a copy's rank is its file's
    index, then its place in the file). Of each request only its chosen copy's numbers, model
    and session are held, in columns, and its calls are `WeighedCalls` of those columns: a
    caller that lets go of a file's requests once it is added holds little more than that
    (a command's first read of a large history)."""

    def __init__(self, paths: Iterable[str], since_ms: int | None = None) -> None:
        self.since_ms = since_ms
        self.low = None if since_ms is None else since_ms - COPIES_SPAN_MS
        self.present = {a for p in paths if (a := agent_id_of(p)) is not None}
        # A session's folder is where it started: Claude Code's `cwd` follows the agent's
        # `cd`s, and one session is one project row. A file is written in time order: its
        # first request with a `cwd` is its earliest (session → time, file index, cwd).
        self.started: dict[str, tuple[int, int, str]] = {}
        self.starts: set[int] = set()  # the files whose start is weighed
        # A request's key: `message.id` + `requestId`, else where its line lies (its own call).
        self.slots: dict[str, int] = {}  # request key → its slot in the columns below
        self.keys: list[str] = []
        self.models: list[str] = []
        self.sessions: list[str] = []
        self.numbers = array("q")  # `_WIDTH` numbers per slot
        self.heads: list[tuple[int, ClaudeFile]] = []  # what names a session, per file

    def add(self, index: int, file: ClaudeFile, start: int = 0) -> None:
        """Weigh the requests of the file at `index`; `start`: they are its requests from
        that place on (a large file may be given in consecutive pieces, from 0)."""
        present, low = self.present, self.low
        parent = parent_session_of(file.path)
        if index not in self.starts:
            self._note_start(index, file, parent)
        slots, keys, models, sessions = self.slots, self.keys, self.models, self.sessions
        numbers = self.numbers
        base = (index << _RANK_BITS) + start
        for position, request in enumerate(file.requests):
            if low is not None and request.timestamp_ms < low:
                continue
            if request.agent_id is not None and request.agent_id in present:
                continue  # the sub-agent's own file holds it
            at = base + position
            key = request.key or f"{file.path}@{request.offset}"
            slot = slots.get(key)
            if slot is None:
                slots[key] = len(keys)
                keys.append(key)
                models.append(request.model)
                sessions.append(session_of(request, file.path, parent))
                numbers.extend(_numbers(request, at))
                numbers.append(at)
                continue
            i = slot * _WIDTH
            numbers[i + _FIRST_AT] = min(numbers[i + _FIRST_AT], at)
            held = numbers[i + _OUTPUT]
            if request.output_tokens > held or (
                request.output_tokens == held and at < numbers[i + _CHOSEN_AT]
            ):
                models[slot] = request.model
                sessions[slot] = session_of(request, file.path, parent)
                numbers[i : i + _FIRST_AT] = array("q", _numbers(request, at))
        if not start and file.requests and (file.summary or file.first_prompt):
            self.name(
                index, ClaudeFile(file.path, file.requests[:1], file.summary, file.first_prompt)
            )

    def _note_start(self, index: int, file: ClaudeFile, parent: str | None) -> None:
        """Weigh where the session of the file at `index` started: its first request that
        names a folder (a `progress` copy only when its sub-agent's own file is absent)."""
        for request in file.requests:
            if request.cwd and (request.agent_id is None or request.agent_id not in self.present):
                session = session_of(request, file.path, parent)
                first = self.started.get(session)
                if first is None or (request.timestamp_ms, index) < first[:2]:
                    self.started[session] = (request.timestamp_ms, index, request.cwd)
                self.starts.add(index)
                return

    def name(self, index: int, head: ClaudeFile) -> None:
        """What names a session in the file at `index`: its first request, summary and first
        prompt (a file given in pieces is named once read)."""
        self.heads.append((index, head))

    def result(self) -> ClaudeCalls:
        """The calls, in the order of their requests' first copies, and the sessions' titles."""
        projects = {s: path_project(cwd) for s, (_, _, cwd) in self.started.items()}
        numbers, since_ms, models = self.numbers, self.since_ms, self.models
        self.slots = {}  # (the weighing is over: its index goes first)
        firsts = numbers[_FIRST_AT::_WIDTH]
        slots: Iterable[int] = range(len(self.keys))
        if any(firsts[i] > firsts[i + 1] for i in range(len(firsts) - 1)):
            slots = sorted(slots, key=firsts.__getitem__)
        del firsts
        order, costs, priced = array("q"), array("d"), bytearray()
        sessions = self.sessions
        runs = SessionRuns()
        for slot in slots:
            i = slot * _WIDTH
            ms = numbers[i + _TIME]
            if since_ms is not None and ms < since_ms:
                continue
            model, session = models[slot], sessions[slot]
            read, write_5m, write_1h = numbers[i + _READ : i + _CHOSEN_AT]
            cost, known = claude_cost(
                model, numbers[i + _INPUT], numbers[i + _OUTPUT], write_5m, write_1h, read
            )
            order.append(slot)
            costs.append(cost)
            priced.append(known)
            project = projects.get(session, UNKNOWN_PROJECT)
            runs.add(session, project, CLAUDE_CODE, call_model(model), ms)
        calls = WeighedCalls(
            self.keys, models, sessions, projects, numbers, order, costs, priced, runs.runs()
        )
        self.keys, self.models, self.sessions, self.numbers = [], [], [], array("q")
        titles: dict[str, str] = {}
        prompts: dict[str, str] = {}
        for _, head in sorted(self.heads, key=lambda item: item[0]):
            note_title(head, titles, prompts)
        for session, prompt in prompts.items():
            titles.setdefault(session, prompt)
        return ClaudeCalls(calls, titles)


class WeighedCalls(CallRun):
    """The calls of a weighing, made from its columns as they are asked for: in `order` (the
    slots of the calls kept), with each call's cost and whether it is priced beside, and what
    they say of each session. Equal, call for call, to the `Call`s its requests' chosen copies
    make (`make_call`)."""

    def __init__(
        self,
        keys: list[str],
        models: list[str],
        sessions: list[str],
        projects: dict[str, str],
        numbers: array[int],
        order: array[int],
        costs: array[float],
        priced: bytearray,
        runs: dict[str, SessionRun],
    ) -> None:
        self.keys, self.models, self.sessions, self.projects = keys, models, sessions, projects
        self.numbers, self.order, self.costs, self.priced = numbers, order, costs, priced
        self.session_runs = runs

    def __len__(self) -> int:
        return len(self.order)

    def __iter__(self) -> Iterator[Call]:
        return map(self._at, range(len(self.order)))

    def _at(self, index: int) -> Call:
        slot = self.order[index]
        numbers, i, session = self.numbers, slot * _WIDTH, self.sessions[slot]
        return Call(
            call_key(self.keys[slot]),
            CLAUDE_CODE,
            call_model(self.models[slot]),
            self.projects.get(session, UNKNOWN_PROJECT),
            session,
            numbers[i + _TIME],
            numbers[i + _INPUT],
            numbers[i + _OUTPUT],
            numbers[i + _READ],
            numbers[i + _WRITE_5M] + numbers[i + _WRITE_1H],
            self.costs[index],
            False,  # estimated
            False,  # billed
            self.priced[index] == 1,
        )

    def since(self, ms: int) -> list[Call]:
        numbers = self.numbers
        return [
            self._at(at)
            for at, slot in enumerate(self.order)
            if numbers[slot * _WIDTH + _TIME] >= ms
        ]

    def runs(self) -> dict[str, SessionRun]:
        """`session_runs` of these calls, as the weighing found them (no call is made)."""
        return dict(self.session_runs)


def _numbers(request: ClaudeRequest, at: int) -> tuple[int, ...]:
    """A chosen copy's numbers in a weighing's columns, up to its rank `at`."""
    return (
        request.timestamp_ms,
        request.input_tokens,
        request.output_tokens,
        request.cache_read_tokens,
        request.cache_write_5m,
        request.cache_write_1h,
        at,
    )
