"""The days' loop over local calls (`_Grouper.add_local`): the same groups, in the same order
and with the same sums (float additions in the same order), as adding each call on its own —
whatever runs, day boundaries, equal-but-distinct strings and coverage it meets."""

from __future__ import annotations

import random
from datetime import date, timedelta

from codeburn.cache.imports.records import CoverageIndex, Range
from codeburn.providers import CURSOR, CURSOR_AGENT, Call, DayIndex, local_midnight_ms
from codeburn.server.service.derive import LOCAL, _Grouper

FIRST = date(2026, 3, 1)
LAST = FIRST + timedelta(days=6)


def _calls(seed: int) -> list[Call]:
    rnd = random.Random(seed)
    start = local_midnight_ms(FIRST) - 3_600_000  # some before the first day: left out
    ms = start
    calls: list[Call] = []
    for n in range(3000):
        if rnd.random() < 0.1:
            ms = start + rnd.randrange(9 * 86_400_000)  # jumps, back and forth
        ms += rnd.randrange(0, 2 * 3_600_000)
        session = "s" + str(rnd.randrange(6))  # a new object at each call: equal, not the same
        calls.append(
            Call(
                key=f"k{n}",
                provider=rnd.choice([CURSOR, CURSOR, CURSOR_AGENT]),
                model=rnd.choice(["gpt-5", "gpt-5", "claude-4.6-sonnet"]),
                project=rnd.choice(["cursor", "app"]),
                session=session if rnd.random() < 0.3 else "run",
                timestamp_ms=ms,
                input_tokens=rnd.randrange(100),
                output_tokens=rnd.randrange(100),
                cache_read_tokens=rnd.randrange(3),
                cache_write_tokens=rnd.randrange(3),
                cost=rnd.random() / 7,
                estimated=rnd.random() < 0.9,
                billed=rnd.random() < 0.1,
                priced=rnd.random() < 0.95,
                not_charged=rnd.random() < 0.05,
            )
        )
    return calls


def test_add_local_makes_the_groups_one_call_at_a_time_would() -> None:
    midday = local_midnight_ms(FIRST + timedelta(days=2)) + 43_200_000
    coverage = CoverageIndex([Range(midday, midday + 20 * 3_600_000, "import")])
    for seed in range(4):
        calls = _calls(seed)
        for cover in (None, coverage):
            fast = _Grouper(DayIndex(FIRST, LAST), FIRST, LAST)
            fast.add_local(calls, cover)
            slow = _Grouper(DayIndex(FIRST, LAST), FIRST, LAST)
            for call in calls:
                if cover is None or not cover.covers(call.provider, call.timestamp_ms):
                    slow.add(call, True, LOCAL)
            assert list(fast.groups.items()) == list(slow.groups.items())
            assert len(fast.groups) > 100
