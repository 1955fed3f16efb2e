"""A conversation's tools and commands from its joined agent requests: each once, in the
order first seen across the requests (what the first call, or the conversation record,
carries)."""

from __future__ import annotations

from codeburn.providers.agent import StreamRequest
from codeburn.providers.ide.emit import Bubble, Conversation, _stream_tools, emit_conversation

BUBBLE = Bubble(
    1, "cursor:bubble:bubbleId:c1:b1", 2, 1_772_000_000_000, 10, 20, "gpt-5", 0, None, "r1"
)


def test_stream_tools_are_each_once_in_first_seen_order() -> None:
    stream = [
        StreamRequest("r1", tools=["Read", "Bash", "Read"], commands=["git"]),
        StreamRequest("r2"),
        StreamRequest("r3", tools=["Edit", "Bash"], commands=["npm", "git", "ls"]),
    ]
    conv = Conversation("c1", [BUBBLE], None, stream)
    assert _stream_tools(conv) == (("Read", "Bash", "Edit"), ("git", "npm", "ls"))
    assert _stream_tools(Conversation("c1", [BUBBLE], None, [])) == ((), ())
    (call,) = emit_conversation(conv)
    assert call.tools == ("Read", "Bash", "Edit") and call.commands == ("git", "npm", "ls")
