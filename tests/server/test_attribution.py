"""Attribution of exact events to local conversations (docs/attribution.md), on hand-made
conversations."""

from __future__ import annotations

from codeburn.providers import CURSOR, CURSOR_AGENT, OTHER_MACHINES_PROJECT, Call
from codeburn.providers.conversations import LocalConversation
from codeburn.server.service.attribution import (
    BY_ID,
    BY_TIME,
    OTHER_MACHINES,
    UNATTRIBUTED,
    agreement,
    attribute,
)

T0 = 1_780_000_000_000
S = 1_000


def conv(
    cid: str,
    project: str,
    turns: list[tuple[int, int, str | None]],
    *,
    provider: str = CURSOR,
    models: tuple[str, ...] = (),
) -> LocalConversation:
    first = min((t[0] for t in turns), default=T0)
    last = max((t[1] for t in turns), default=T0)
    return LocalConversation(
        cid, project, provider, f"title {cid}", models, tuple(turns), first, last
    )


def event(ts: int, model: str = "claude-4.5-sonnet", cost: float = 1.0) -> Call:
    return Call(
        key=f"cursor-import:{ts}:{model}",
        provider=CURSOR,
        model=model,
        project="Cursor (imported)",
        session="cursor-import:cursor:2026-06-01",
        timestamp_ms=ts,
        cost=cost,
        estimated=False,
        billed=True,
    )


def run(
    convs: list[LocalConversation], events: list[tuple[Call, str]], notes: list[str] | None = None
) -> list[tuple[str, str, str]]:
    by_id = {c.id: c for c in convs}
    return [(a.kind, a.call.project, a.call.session) for a in attribute(events, by_id, notes)]


A = conv("comp-a", "-home-me-alpha", [(T0, T0 + 60 * S, "claude-sonnet-4-5")])
B = conv(
    "cli-b",
    "-home-me-beta",
    [(T0 + 30 * S, T0 + 90 * S, "gpt-5")],
    provider=CURSOR_AGENT,
)


def test_an_id_of_a_local_conversation_takes_its_project_session_and_provider() -> None:
    by_id = {c.id: c for c in (A, B)}
    done = list(attribute([(event(T0 - 3_600_000), "cli-b")], by_id))
    assert [(d.kind, d.call.project, d.call.session, d.call.provider) for d in done] == [
        (BY_ID, "-home-me-beta", "cli-b", CURSOR_AGENT)
    ]
    assert done[0].conversation is B


def test_an_unknown_id_is_other_machines_never_a_local_project() -> None:
    # Inside A's turn and of A's model: the id says it is not A.
    assert run([A, B], [(event(T0 + 5 * S), "comp-a"), (event(T0 + 5 * S), "cloud-1")]) == [
        (BY_ID, "-home-me-alpha", "comp-a"),
        (OTHER_MACHINES, OTHER_MACHINES_PROJECT, "cloud-1"),
    ]


def test_without_an_id_the_one_turn_holding_the_time_whose_model_agrees() -> None:
    events = [
        (event(T0 + 10 * S, "claude-4.5-sonnet-thinking"), ""),  # A only (B not yet)
        (event(T0 + 80 * S, "gpt-5-high"), ""),  # B only
        (event(T0 + 45 * S, "gpt-5"), ""),  # both turns, only B's model agrees
        (event(T0 - 1_500), ""),  # 1.5 s before A's user message: inside the slack
        (event(T0 + 62 * S), ""),  # 2 s after A's last reply: still A
        (event(T0 - 2_500), ""),  # outside
        (event(T0 + 10 * S, "gemini-2.5-pro"), ""),  # A's time, another model
    ]
    assert [k for k, _, _ in run([A, B], events)] == [
        BY_TIME,
        BY_TIME,
        BY_TIME,
        BY_TIME,
        BY_TIME,
        UNATTRIBUTED,
        UNATTRIBUTED,
    ]
    assert [s for _, _, s in run([A, B], events)][:5] == [
        "comp-a",
        "cli-b",
        "cli-b",
        "comp-a",
        "comp-a",
    ]


def test_overlapping_conversations_of_one_model_stay_unattributed() -> None:
    a2 = conv("comp-a2", "-home-me-gamma", [(T0 + 20 * S, T0 + 40 * S, "claude-sonnet-4-5")])
    assert run([A, a2], [(event(T0 + 30 * S), "")]) == [
        (UNATTRIBUTED, "Cursor (imported)", "cursor-import:cursor:2026-06-01")
    ]


def test_auto_agrees_with_every_model_but_an_exact_model_is_more_plausible() -> None:
    auto = conv("comp-auto", "-home-me-auto", [(T0, T0 + 60 * S, "cursor-auto")])
    # A named model: A (the same base model) beats the auto conversation.
    assert run([A, auto], [(event(T0 + 5 * S), "")]) == [(BY_TIME, "-home-me-alpha", "comp-a")]
    # An auto event agrees with both equally: ambiguous.
    assert run([A, auto], [(event(T0 + 5 * S, "cursor-auto"), "")])[0][0] == UNATTRIBUTED
    assert agreement("cursor-auto", "gpt-5") == agreement("gpt-5", "cursor-auto") == 1
    assert agreement("gpt-5", "claude-sonnet-4-5") == 0


def test_a_turn_without_a_model_uses_the_conversations_models() -> None:
    c = conv("comp-c", "-home-me-c", [(T0, T0 + 10 * S, None)], models=("gpt-5",))
    assert run([c], [(event(T0 + S, "gpt-5"), ""), (event(T0 + S), "")]) == [
        (BY_TIME, "-home-me-c", "comp-c"),
        (UNATTRIBUTED, "Cursor (imported)", "cursor-import:cursor:2026-06-01"),
    ]


def test_ids_of_another_namespace_are_matched_by_time_and_said_so() -> None:
    notes: list[str] = []
    events = [(event(T0 + 10 * S), "zz-1"), (event(T0 + 80 * S, "gpt-5"), "zz-2")]
    assert run([A, B], events, notes) == [
        (BY_TIME, "-home-me-alpha", "comp-a"),
        (BY_TIME, "-home-me-beta", "cli-b"),
    ]
    assert len(notes) == 1 and "matched by time" in notes[0]


def test_the_guard_needs_local_conversations_in_the_same_period() -> None:
    notes: list[str] = []
    far = T0 + 40 * 86_400_000  # no local conversation then: the ids are other machines
    assert run([A, B], [(event(far), "zz-1")], notes)[0][0] == OTHER_MACHINES
    assert notes == []


def test_one_matching_id_disables_the_guard() -> None:
    events = [(event(T0 + 10 * S), "comp-a"), (event(T0 + 80 * S, "gpt-5"), "zz-2")]
    assert [k for k, _, _ in run([A, B], events)] == [BY_ID, OTHER_MACHINES]


def test_without_local_knowledge_events_stay_unattributed() -> None:
    done = list(attribute([(event(T0), "comp-a")], None))
    assert [(d.kind, d.call.project) for d in done] == [(UNATTRIBUTED, "Cursor (imported)")]
