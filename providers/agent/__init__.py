"""Cursor's agent formats shared by the IDE database and the CLI store: protobuf, graph, stream."""

from typing import TYPE_CHECKING

from codeburn.providers.lazy import lazy_surface

if TYPE_CHECKING:
    from codeburn.providers.agent.blob_parts import (
        BAD,
        FLAT_TURN,
        PROMPT,
        ROLES,
        STEP,
        TEXT,
        TURN,
        USER,
        Part,
        Parts,
        TurnPart,
        UserPart,
        blob_id,
        decoder,
        part_of,
    )
    from codeburn.providers.agent.graph import (
        Graph,
        GraphTurn,
        GraphUnreadable,
        RootFields,
        TurnsWalked,
        decode_parts,
        decode_root,
        finish_turns,
        reached_ids,
        root_fields,
        walk_turns,
    )
    from codeburn.providers.agent.graph_to_calls import (
        graph_calls,
        graph_turns,
    )
    from codeburn.providers.agent.stream import (
        Record,
        StreamRequest,
        StreamWalker,
        command_names,
        content_chars,
        json_value,
        record_of,
    )
    from codeburn.providers.conversations import Turn
else:  # imported on first use (codeburn.providers.lazy)
    __getattr__ = lazy_surface(__name__)

__all__ = [
    "BAD",
    "FLAT_TURN",
    "PROMPT",
    "ROLES",
    "STEP",
    "TEXT",
    "TURN",
    "USER",
    "Graph",
    "GraphTurn",
    "GraphUnreadable",
    "Part",
    "Parts",
    "Record",
    "RootFields",
    "StreamRequest",
    "StreamWalker",
    "Turn",
    "TurnPart",
    "TurnsWalked",
    "UserPart",
    "blob_id",
    "command_names",
    "content_chars",
    "decode_parts",
    "decode_root",
    "decoder",
    "finish_turns",
    "graph_calls",
    "graph_turns",
    "json_value",
    "part_of",
    "reached_ids",
    "record_of",
    "root_fields",
    "walk_turns",
]
