"""Valid JSON always (issue 10, defect 7): no `Infinity` or `NaN` in anything we write."""

from __future__ import annotations

import json

from codeburn.cache.config import Budget
from codeburn.server.service.json_out import dumps, finite
from codeburn.server.service.report import budget_block


def test_non_finite_numbers_become_null_and_the_rest_is_kept() -> None:
    data = {"a": [1.5, float("inf"), (float("-inf"), float("nan"))], "b": {"c": 2, "d": "x"}}
    assert finite(data) == {"a": [1.5, None, (None, None)], "b": {"c": 2, "d": "x"}}
    assert json.loads(dumps(data)) == {"a": [1.5, None, [None, None]], "b": {"c": 2, "d": "x"}}


def test_an_infinite_budget_reaching_the_status_is_written_as_null() -> None:
    block = budget_block(Budget(daily=float("inf"), monthly=None), 1.0, 2.0)
    assert json.loads(dumps(block)) == {"daily": None, "monthly": None, "level": "ok"}


def test_dumps_never_writes_a_non_finite_number() -> None:
    assert dumps(float("nan")) == "null"
    assert dumps([float("inf")], indent=2) == "[\n  null\n]"
