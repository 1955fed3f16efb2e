"""Cursor's JSON usage events (`get-filtered-usage-events`): one event → an export row + its detail.

The dashboard's JSON events describe the same events as the usage export (CSV). Each one becomes
the `UsageRow` the export would have (same identity: time to the ms, model, four token counts), so
both sources are one stored event, plus an `EventDetail` with what only the JSON says: the
conversation, the billing kind, what Cursor charged and its token fee. Every field is optional and
numbers may come as strings; a value that is present but unreadable makes the answer one we do not
understand (`EventShapeError`), never a guessed figure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Literal, NamedTuple

from codeburn.providers.exports.team import is_email
from codeburn.providers.exports.usage_csv import UsageRow, billed_amount, identity
from codeburn.providers.localtime import iso_utc

KIND_PREFIX: Final = "USAGE_EVENT_KIND_"
# What a kind means for the bill: the same classes as the export's Kind cell.
BillingClass = Literal["included", "billed", "not-charged", "user-api-key"]
_INCLUDED_KINDS: Final = frozenset(
    {"INCLUDED_IN_PRO", "INCLUDED_IN_PRO_PLUS", "INCLUDED_IN_ULTRA", "INCLUDED_IN_BUSINESS"}
)
# The export's Kind cell for the kinds we know (a JSON-only event shows the same label).
_KIND_LABELS: Final = {
    "FREE_CREDIT": "Free",
    "USAGE_BASED": "Usage-based",
    "ERRORED_NOT_CHARGED": "Errored, Not Charged",
    "ABORTED_NOT_CHARGED": "Aborted, Not Charged",
    "USER_API_KEY": "User API Key",
    "CUSTOM_SUBSCRIPTION": "Custom Subscription",
}
_MAX_TOKENS: Final = 10**12  # the export's bounds: for garbage, not for heavy use
_MAX_CENTS: Final = 100_000_000  # $1,000,000
_EARLIEST_MS: Final = 946_684_800_000  # 2000-01-01
_LATEST_MS: Final = 4_133_980_799_999  # 2100-12-31
MAX_CONVERSATION_ID: Final = 256
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class EventShapeError(ValueError):
    """A JSON usage event we cannot read (the answer is then of unknown shape)."""


class EventDetail(NamedTuple):
    """What only the JSON usage events carry; "" / None when the event did not say."""

    kind: str = ""
    conversation_id: str = ""
    charged_cents: float | None = None
    cursor_fee_cents: float | None = None

    @property
    def billing(self) -> BillingClass | None:
        return billing_class(self.kind)

    @property
    def billed_dollars(self) -> float | None:
        """What Cursor charged (its token fee included), for usage-based events only."""
        if self.billing != "billed" or self.charged_cents is None:
            return None
        return self.charged_cents / 100

    @property
    def cursor_fee(self) -> float | None:
        """Cursor's token fee in dollars (part of the billed cost) when the event was billed."""
        if self.billing != "billed" or self.cursor_fee_cents is None:
            return None
        return self.cursor_fee_cents / 100


class UsageEvent(NamedTuple):
    """One JSON event as the export row it stands for and its detail."""

    row: UsageRow
    detail: EventDetail
    owning_user: str = ""  # in memory only, to keep one person's events


def billing_class(kind: str) -> BillingClass | None:
    """The bill class of a `USAGE_EVENT_KIND_*`; None for kinds we do not know."""
    name = kind.strip().upper().removeprefix(KIND_PREFIX)
    if name in _INCLUDED_KINDS or name.startswith("INCLUDED_IN_") or name == "FREE_CREDIT":
        return "included"
    if name == "USAGE_BASED":
        return "billed"
    if name.endswith("NOT_CHARGED"):
        return "not-charged"
    if name == "USER_API_KEY":
        return "user-api-key"
    return None


def kind_label(kind: str) -> str:
    """The export's Kind cell for a JSON kind (the raw kind when we do not know it)."""
    name = kind.strip().upper().removeprefix(KIND_PREFIX)
    if name.startswith("INCLUDED_IN_"):
        return "Included"
    return _KIND_LABELS.get(name, kind.strip())


def parse_events(items: Iterable[Any]) -> list[UsageEvent]:
    """Every event of an answer, identical events of one answer numbered as in the export."""
    events: list[UsageEvent] = []
    seen: dict[str, int] = {}
    for n, item in enumerate(items, start=1):
        event = parse_event(item, n)
        occurrence = seen[event.row.hash] = seen.get(event.row.hash, 0) + 1
        if occurrence > 1:
            row = event.row
            tokens = (row.cache_write, row.input, row.cache_read, row.output)
            numbered = identity(row.timestamp_ms, row.model, tokens, occurrence)
            event = UsageEvent(replace(row, hash=numbered), event.detail, event.owning_user)
        events.append(event)
    return events


def parse_event(item: Any, n: int = 0) -> UsageEvent:
    """One `usageEventsDisplay` entry; EventShapeError when a present value is unreadable."""
    if not isinstance(item, Mapping):
        raise EventShapeError(f"event {n} is not an object")
    ts = _whole(item.get("timestamp"), "timestamp", n)
    if ts is None or not _EARLIEST_MS <= ts <= _LATEST_MS:
        raise EventShapeError(f"event {n} has no readable timestamp")
    model = _text(item.get("model"), "model", n) or "unknown"
    usage = item.get("tokenUsage")
    if usage is None:
        usage = {}
    if not isinstance(usage, Mapping):
        raise EventShapeError(f"event {n}: tokenUsage is not an object")
    tokens = [
        _count(usage.get(key), key, n)
        for key in ("cacheWriteTokens", "inputTokens", "cacheReadTokens", "outputTokens")
    ]
    kind = _text(item.get("kind"), "kind", n)
    charged = _cents(item.get("chargedCents"), "chargedCents", n)
    fee = _cents(item.get("cursorTokenFee"), "cursorTokenFee", n)
    if charged is None and billing_class(kind) == "billed":
        charged = _charged_from_parts(usage, fee, item.get("usageBasedCosts"), n)
    conversation = _text(item.get("conversationId"), "conversationId", n)
    detail = EventDetail(
        kind=kind,
        # Cursor's ids are UUIDs (36 characters); a longer one is garbage and is not kept.
        conversation_id=conversation if len(conversation) <= MAX_CONVERSATION_ID else "",
        charged_cents=charged,
        cursor_fee_cents=fee,
    )
    date = iso_utc(ts)
    row = UsageRow(
        date=date,
        timestamp_ms=ts,
        cloud_agent_id="",
        automation_id="",
        kind=kind_label(kind),
        model=model,
        max_mode=_max_mode(item.get("maxMode"), n),
        cache_write=tokens[0],
        input=tokens[1],
        cache_read=tokens[2],
        output=tokens[3],
        total=sum(tokens),
        cost=_cost_cell(detail),
        hash=identity(ts, model, tokens),
        line=n,
    )
    owner = item.get("owningUser")
    owning = str(owner).strip() if isinstance(owner, (str, int)) and owner is not True else ""
    return UsageEvent(row, detail, owning)


def one_persons_events(
    events: Sequence[UsageEvent], *, user_ids: Iterable[str]
) -> list[UsageEvent] | None:
    """A team account's events: the signed-in person's only (by user id or e-mail).

    The rule of a team export (`chosen_user`): events that name their owner are kept only when
    the owner is the signed-in person. None (store nothing) when they name several people and
    none is this one, or one person we can tell is someone else: an e-mail while the signed-in
    e-mail is known, a `user_...` id while the login's is. One owner we cannot compare (another
    form of id) is taken as this account's own, as a personal export's `You` is."""
    owners = {e.owning_user.casefold() for e in events if e.owning_user}
    if not owners:
        return list(events)
    mine = {u.strip().casefold() for u in user_ids if u and u.strip()}
    if mine & owners:
        return [e for e in events if e.owning_user.casefold() in mine]
    if len(owners) > 1:
        return None
    (owner,) = owners
    return None if any(_same_form(owner, me) for me in mine) else list(events)


def _same_form(owner: str, me: str) -> bool:
    """Whether two owner names can be compared: two e-mails, or two ids of the same prefix."""
    if is_email(owner) or is_email(me):
        return is_email(owner) and is_email(me)
    prefix, sep, _ = owner.partition("_")
    return bool(sep) and prefix.isalpha() and me.startswith(prefix + "_")


def _cost_cell(detail: EventDetail) -> str:
    """The export's Cost cell: what a usage-based event was charged, else what its kind says."""
    billing = detail.billing
    if billing == "billed" and detail.charged_cents is not None:
        return f"${detail.charged_cents / 100:.10g}"
    if billing == "not-charged":
        return "-"
    return "Included" if billing == "included" else ""


def _charged_from_parts(
    usage: Mapping[str, Any], fee: float | None, shown: Any, n: int
) -> float | None:
    """A usage-based event without `chargedCents`: token cost + fee, else the dashboard's Cost."""
    total = _cents(usage.get("totalCents"), "totalCents", n)
    if total is not None:
        return total + (fee or 0.0)
    if isinstance(shown, str):
        dollars = billed_amount(shown)
        if dollars is not None and dollars * 100 <= _MAX_CENTS:
            return dollars * 100
    return None


def clean_text(value: str) -> str:
    """`value` with each lone surrogate ("\\ud800", which JSON may carry but UTF-8 cannot encode)
    replaced by U+FFFD: such text, once stored, would make every later JSON output fail."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", value)
    return value


def _text(value: Any, key: str, n: int) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return clean_text(value.strip())
    raise EventShapeError(f"event {n}: {key} is not text")


def _number(value: Any, key: str, n: int) -> float | None:
    """A JSON number or a numeric string; None when absent."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise EventShapeError(f"event {n}: {key} is not a number")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and len(value) <= 40:
        try:
            number = float(value.strip())
        except ValueError:
            raise EventShapeError(f"event {n}: {key} is not a number") from None
    else:
        raise EventShapeError(f"event {n}: {key} is not a number")
    if not math.isfinite(number) or number < 0:
        raise EventShapeError(f"event {n}: {key} is not a plausible amount")
    return number


def _whole(value: Any, key: str, n: int) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise EventShapeError(f"event {n}: {key} is not a plausible amount")
        return value
    digits = value.strip() if isinstance(value, str) else ""
    if digits.isascii() and digits.isdigit() and len(digits) <= 20:
        return int(digits)  # epoch ms as a string: exact, never through a float
    number = _number(value, key, n)
    if number is None:
        return None
    if not number.is_integer():
        raise EventShapeError(f"event {n}: {key} is not a whole number")
    return int(number)


def _count(value: Any, key: str, n: int) -> int:
    whole = _whole(value, key, n)
    if whole is None:
        return 0
    if whole > _MAX_TOKENS:
        raise EventShapeError(f"event {n}: {key} is beyond what Cursor bills")
    return whole


def _cents(value: Any, key: str, n: int) -> float | None:
    number = _number(value, key, n)
    if number is not None and number > _MAX_CENTS:
        raise EventShapeError(f"event {n}: {key} is beyond what Cursor bills")
    return number


def _max_mode(value: Any, n: int) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, str):
        return value.strip()
    raise EventShapeError(f"event {n}: maxMode is not true/false")
