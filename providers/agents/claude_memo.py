"""`claude_calls` kept between reads: after an append, only the new requests are weighed.

`ClaudeCallsMemo.calls(files, since_ms)` returns what `claude_calls(files, since_ms)` returns
(the same calls, in the same order, and the same titles). It reuses its last answer for the same
`since_ms` when every file is the one it saw, at most grown by new requests at its end, and
nothing a new request could change beyond its own call did change: the set of files (a
sub-agent's own file decides which copies count), a file's title lines, a session's starting
folder. Anything else is made again whole by `claude_calls`' rules. A caller that knows which
files changed since its last call says so (`touched`): the others are not looked at again.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from codeburn.providers.agents.claude_code import (
    COPIES_SPAN_MS,
    UNKNOWN_PROJECT,
    ClaudeCalls,
    ClaudeFile,
    ClaudeRequest,
    agent_id_of,
    make_call,
    note_title,
    parent_session_of,
    session_of,
)
from codeburn.providers.calls import Call
from codeburn.providers.ide import path_project

INSERTS: Final = 1000  # more new keys than this: sort them all again
SLOTS: Final = 4  # a status reads two periods (the history before the month, and the month)

Position = tuple[int, int]  # file index, request index: copies tie-break on the earliest


@dataclass(slots=True)
class _Seen:
    """One file as the last answer saw it."""

    path: str
    count: int
    first: ClaudeRequest | None  # the same objects: a rewritten file has new ones
    last: ClaudeRequest | None
    summary: str | None
    first_prompt: str | None
    started: bool  # a request of it set (or competed for) its session's folder


@dataclass(slots=True)
class _Answer:
    since_ms: int | None
    files: list[_Seen]
    present: set[str]
    projects: dict[str, str]  # session → project
    chosen: dict[str, tuple[ClaudeRequest, str, Position]] = field(default_factory=dict)
    first_at: dict[str, Position] = field(default_factory=dict)  # where a key first counts
    made: dict[str, Call] = field(default_factory=dict)
    # The keys whose call lies in the period (at or after `since_ms`) by `first_at`, and
    # their calls: the answer's calls. `resort`: to be made again from every key (a key
    # moved to an earlier copy, or none sorted yet).
    period: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    resort: bool = True
    added: int = 0  # keys new since the last result
    changed: set[str] = field(default_factory=set)  # keys whose call is to be made again
    titles: dict[str, str] = field(default_factory=dict)
    result: ClaudeCalls | None = None
    # the places of the files that may differ from those it saw (None: any)
    touched: set[int] | None = field(default_factory=set)


class ClaudeCallsMemo:
    """The last answers of `claude_calls`, per `since_ms`, updated by new requests only."""

    def __init__(self) -> None:
        self._answers: dict[int | None, _Answer] = {}
        self.full_makes = 0  # answers made whole (tests and benches read it)

    def calls(
        self,
        files: list[ClaudeFile],
        since_ms: int | None,
        touched: Iterable[int] | None = None,
    ) -> ClaudeCalls:
        """`claude_calls(files, since_ms)`. `touched`: the places of the files that may differ
        from the last call's `files` (None: any)."""
        touched = None if touched is None else list(touched)
        for kept in self._answers.values():
            if touched is None:
                kept.touched = None
            elif kept.touched is not None:
                kept.touched.update(touched)
        answer = self._answers.get(since_ms)
        if answer is not None and self._grow(answer, files):
            return self._result(answer)
        answer = self._make(files, since_ms)
        self._answers.pop(since_ms, None)
        self._answers[since_ms] = answer
        while len(self._answers) > SLOTS:
            del self._answers[next(iter(self._answers))]
        return self._result(answer)

    def clear(self) -> None:
        self._answers.clear()

    # -- whole ---------------------------------------------------------------------------

    def _make(self, files: list[ClaudeFile], since_ms: int | None) -> _Answer:
        """`claude_calls`' rules, keeping where each request lies."""
        self.full_makes += 1
        present = {a for f in files if (a := agent_id_of(f.path)) is not None}
        started: dict[str, tuple[int, str]] = {}
        seen: list[_Seen] = []
        for file in files:
            parent = parent_session_of(file.path)
            found = False
            for request in file.requests:
                if request.cwd and (request.agent_id is None or request.agent_id not in present):
                    session = session_of(request, file.path, parent)
                    first = started.get(session)
                    if first is None or request.timestamp_ms < first[0]:
                        started[session] = (request.timestamp_ms, request.cwd)
                    found = True
                    break
            seen.append(_seen(file, found))
        projects = {session: path_project(cwd) for session, (_, cwd) in started.items()}
        answer = _Answer(since_ms, seen, present, projects)
        titles: dict[str, str] = {}
        prompts: dict[str, str] = {}
        for index, file in enumerate(files):
            self._weigh(answer, index, file, 0)
            note_title(file, titles, prompts)
        for session, prompt in prompts.items():
            titles.setdefault(session, prompt)
        answer.titles = titles
        return answer

    # -- grown -----------------------------------------------------------------------------

    def _grow(self, answer: _Answer, files: list[ClaudeFile]) -> bool:
        """Take the files' new requests into `answer`; False (nothing changed) when more than
        new requests at the ends of files changed."""
        if len(files) != len(answer.files):
            return False
        grown: list[int] = []
        looked = range(len(files)) if answer.touched is None else sorted(answer.touched)
        for index in looked:
            file, seen = files[index], answer.files[index]
            if file.path != seen.path or len(file.requests) < seen.count:
                return False
            if seen.count and (
                file.requests[0] is not seen.first or file.requests[seen.count - 1] is not seen.last
            ):
                return False
            if file.summary != seen.summary or file.first_prompt != seen.first_prompt:
                return False  # a title line
            if len(file.requests) > seen.count:
                if not seen.started or not seen.count:
                    return False  # a new request may set where its session started
                grown.append(index)
        for index in grown:
            file, seen = files[index], answer.files[index]
            self._weigh(answer, index, file, seen.count)
            answer.files[index] = _seen(file, seen.started)
        if grown:
            answer.result = None
        answer.touched = set()
        return True

    @staticmethod
    def _weigh(answer: _Answer, index: int, file: ClaudeFile, start: int) -> None:
        """Requests `start`… of the file at `index` compete with the copies held: the largest
        output wins, the earliest copy on a tie (as `claude_calls`' one pass in file order)."""
        since_ms = answer.since_ms
        low = None if since_ms is None else since_ms - COPIES_SPAN_MS
        present, chosen, first_at = answer.present, answer.chosen, answer.first_at
        parent = parent_session_of(file.path)
        for offset, request in enumerate(file.requests[start:]):
            if low is not None and request.timestamp_ms < low:
                continue
            if request.agent_id is not None and request.agent_id in present:
                continue
            session = session_of(request, file.path, parent)
            key = request.key or f"{file.path}@{request.offset}"
            at = (index, start + offset)
            held = chosen.get(key)
            if held is None:
                first_at[key] = at
                answer.added += 1
            elif at < first_at[key]:  # an earlier copy: the key moves in the order
                first_at[key] = at
                answer.resort = True
            if (
                held is None
                or request.output_tokens > held[0].output_tokens
                or (request.output_tokens == held[0].output_tokens and at < held[2])
            ):
                chosen[key] = (request, session, at)
                answer.changed.add(key)

    @staticmethod
    def _result(answer: _Answer) -> ClaudeCalls:
        if answer.result is not None:
            return answer.result
        made, projects, chosen = answer.made, answer.projects, answer.chosen
        since_ms = answer.since_ms
        whole = answer.resort or answer.added > INSERTS
        period, calls, place = answer.period, answer.calls, answer.first_at.__getitem__
        for key in answer.changed:  # a new key, or another copy chosen
            request, session, _ = chosen[key]
            call = make_call(key, request, session, projects.get(session, UNKNOWN_PROJECT))
            was = made.get(key)
            made[key] = call
            if whole:
                continue
            was_in = was is not None and (since_ms is None or was.timestamp_ms >= since_ms)
            is_in = since_ms is None or call.timestamp_ms >= since_ms
            if was_in or is_in:  # (its place in the period: keys are in `first_at` order)
                at = bisect.bisect_left(period, place(key), key=place)
                if was_in and is_in:
                    calls[at] = call
                elif was_in:
                    del period[at], calls[at]
                else:
                    period.insert(at, key)
                    calls.insert(at, call)
        answer.changed.clear()
        answer.added = 0
        if whole:
            answer.period = period = [
                key
                for key in sorted(chosen, key=place)
                if since_ms is None or made[key].timestamp_ms >= since_ms
            ]
            answer.calls = [made[key] for key in period]
            answer.resort = False
        answer.result = ClaudeCalls(list(answer.calls), dict(answer.titles))
        return answer.result


def _seen(file: ClaudeFile, started: bool) -> _Seen:
    requests = file.requests
    return _Seen(
        file.path,
        len(requests),
        requests[0] if requests else None,
        requests[-1] if requests else None,
        file.summary,
        file.first_prompt,
        started,
    )
