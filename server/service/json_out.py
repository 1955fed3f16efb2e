"""JSON we emit (CLI output, `codeburn/status`, reports) is always valid JSON.

Python writes a float that overflowed (a budget of 1e309, a quota ratio) as `Infinity`, which
no JSON parser accepts: such numbers become null before they are written, and every writer
uses `allow_nan=False` so that one that slipped through fails here, not in the editor.
"""

from __future__ import annotations

import json
import math
from typing import Any, TypeVar, cast

T = TypeVar("T")


def finite(obj: T) -> T:
    """`obj` with every infinite or NaN float replaced by None (containers are copied)."""
    return cast(T, _finite(obj))


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {key: _finite(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_finite(value) for value in obj]
    if isinstance(obj, tuple):
        return tuple(_finite(value) for value in obj)
    return obj


def dumps(obj: Any, **options: Any) -> str:
    """`json.dumps` of `finite(obj)`, never with `Infinity` or `NaN` in it."""
    return json.dumps(_finite(obj), allow_nan=False, **options)
