"""Text from data (names, paths, e-mails, messages) made inert for a terminal.

Control and format characters (ESC, BEL, bidi overrides, zero-width characters) are shown as
escapes (`\x1b`), so a file named `\x1b]0;pwned\x07.csv` cannot retitle or repaint a terminal.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Final

_ESCAPED: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # control, format, ...


def plain(value: Any) -> str:
    """`value` as inert text: control and format characters (ESC, bidi overrides) escaped."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(repr(ch)[1:-1] if unicodedata.category(ch) in _ESCAPED else ch for ch in text)


_WHITESPACE: Final = frozenset("\t\n\r\x0b\x0c\x85\u2028\u2029")


def title_text(value: Any) -> str:
    """A conversation title for one line of a table: control characters removed (a title's
    DEL or BEL carries no meaning), line breaks and tabs read as one space; format characters
    stay escaped (`plain`) so a bidi override cannot hide."""
    if value is None:
        return ""
    text = str(value)
    if text.isprintable():
        return text
    kept = (
        " " if ch in _WHITESPACE else "" if unicodedata.category(ch) == "Cc" else ch for ch in text
    )
    return plain(" ".join("".join(kept).split()))
