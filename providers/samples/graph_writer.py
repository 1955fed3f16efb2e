"""Writes agent conversation graphs (the inverse of agent_graph) for tests and sample data.

`build_graph` returns the root bytes and the content-addressed blobs it references
(hex sha256 → bytes); the IDE and CLI writers store them in their own tables.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codeburn.providers.agent import protobuf as pb


@dataclass(frozen=True, slots=True)
class TurnSpec:
    """One turn as Cursor writes it into a turn blob."""

    user: str
    assistant: Sequence[str] = ()  # one assistant step per text
    user_ms: int | None = None  # user message field 25
    assistant_ms: int | None = None  # first assistant step's field 2
    end_ms: int | None = None  # the last assistant step's field 2 (when there are several)
    timing_ms: int | None = None  # root turn_timings[i].timestamp_ms
    simulated: bool = False
    text_in_blob: bool = False  # the user text only in a field-18 blob
    tool_steps: int = 0  # extra tool-call steps (field 2 of a step)


@dataclass(slots=True)
class GraphBlobs:
    """Blobs of one graph, keyed by hex sha256 of their bytes."""

    blobs: dict[str, bytes] = field(default_factory=dict)

    def add(self, data: bytes) -> bytes:
        """Store a blob; returns its 32-byte reference."""
        digest = hashlib.sha256(data).digest()
        self.blobs[digest.hex()] = data
        return digest


def encrypted(data: bytes) -> bytes:
    """Stand-in for an AES-GCM blob: nonce(12) | keystream-xored bytes | tag(16), not parseable."""
    nonce = b"\x00" + hashlib.sha256(data).digest()[:11]  # field number 0: never a message
    stream = hashlib.sha256(b"key" + nonce).digest() * (len(data) // 32 + 1)
    body = bytes(a ^ b for a, b in zip(data, stream, strict=False))
    return nonce + body + hashlib.sha256(body).digest()[:16]


def json_message(
    role: str,
    content: Any,
    *,
    model: str | None = None,
    request_id: str | None = None,
    created_at: str | int | None = None,
) -> dict[str, Any]:
    """A prompt-history record `{role, content, providerOptions.cursor…}`."""
    record: dict[str, Any] = {"role": role, "content": content}
    cursor: dict[str, str] = {}
    if model is not None:
        cursor["modelName"] = model
    if request_id is not None:
        cursor["requestId"] = request_id
    if cursor:
        record["providerOptions"] = {"cursor": cursor}
    if created_at is not None:
        record["createdAt"] = created_at
    return record


def _user_blob(turn: TurnSpec, blobs: GraphBlobs) -> bytes:
    parts = []
    if turn.text_in_blob:
        parts.append(pb.bytes_field(18, blobs.add(turn.user.encode())))
    else:
        parts.append(pb.bytes_field(1, turn.user))
    parts.append(pb.bytes_field(2, f"m-{hashlib.sha256(turn.user.encode()).hexdigest()[:8]}"))
    if turn.simulated:
        parts.append(pb.varint_field(5, 1))
    if turn.user_ms is not None:
        parts.append(pb.varint_field(25, turn.user_ms))
    return pb.message(*parts)


def _turn_blob(turn: TurnSpec, blobs: GraphBlobs) -> bytes:
    agent = [pb.bytes_field(1, blobs.add(_user_blob(turn, blobs)))]
    for i, text in enumerate(turn.assistant):
        assistant = [pb.bytes_field(1, text)]
        if i == 0 and turn.assistant_ms is not None:
            assistant.append(pb.varint_field(2, turn.assistant_ms))
        elif i > 0 and i == len(turn.assistant) - 1 and turn.end_ms is not None:
            assistant.append(pb.varint_field(2, turn.end_ms))
        step = pb.bytes_field(1, pb.message(*assistant))
        agent.append(pb.bytes_field(2, blobs.add(step)))
    for i in range(turn.tool_steps):
        step = pb.bytes_field(2, pb.bytes_field(1, f"call-{i}"))
        agent.append(pb.bytes_field(2, blobs.add(step)))
    return pb.bytes_field(1, pb.message(*agent))


def build_graph(
    turns: Sequence[TurnSpec] = (),
    *,
    prompts: Sequence[dict[str, Any]] = (),
    used_tokens: int = 0,
    started_ms: int | None = None,
    workspace_uris: Sequence[str] = (),
) -> tuple[bytes, dict[str, bytes]]:
    """(root bytes, blobs) of a conversation: prompt-history JSON blobs, turn blobs, meter."""
    blobs = GraphBlobs()
    root: list[bytes] = []
    for record in prompts:
        data = json.dumps(record, separators=(",", ":")).encode()
        root.append(pb.bytes_field(1, blobs.add(data)))
    if used_tokens:
        root.append(pb.bytes_field(5, pb.message(pb.varint_field(1, used_tokens))))
    for turn in turns:
        root.append(pb.bytes_field(8, blobs.add(_turn_blob(turn, blobs))))
    root.extend(pb.bytes_field(9, uri) for uri in workspace_uris)
    for turn in turns:
        timing = [pb.varint_field(1, 1000)]
        if turn.timing_ms is not None:
            timing.append(pb.varint_field(2, turn.timing_ms))
        root.append(pb.bytes_field(14, pb.message(*timing)))
    if started_ms is not None:
        root.append(pb.varint_field(26, started_ms))
    return pb.message(*root), blobs.blobs
