"""Other AI coding tools' own logs on this machine: Claude Code and Codex (docs/other-tools.md)."""

# Imported at once: the CLI's and the server's start import these modules anyway.
from codeburn.providers.agents.claude_code import (
    ClaudeCalls,
    ClaudeChunk,
    ClaudeFile,
    ClaudeRequest,
    decode_claude,
)
from codeburn.providers.agents.codex import (
    CodexChunk,
    CodexState,
    CodexUsage,
    codex_calls,
    decode_codex,
)
from codeburn.providers.agents.logs import (
    ToolSnapshot,
    claude_roots,
    codex_root,
    tool_log_folders,
)
from codeburn.providers.agents.reader import ToolLogs, ToolRead
from codeburn.providers.agents.state import LogChange, Part, ToolStore
from codeburn.providers.agents.weighing import ClaudeWeighing, WeighedCalls, claude_calls

__all__ = [
    "ClaudeCalls",
    "ClaudeChunk",
    "ClaudeFile",
    "ClaudeRequest",
    "ClaudeWeighing",
    "CodexChunk",
    "CodexState",
    "CodexUsage",
    "LogChange",
    "Part",
    "ToolLogs",
    "ToolRead",
    "ToolSnapshot",
    "ToolStore",
    "WeighedCalls",
    "claude_calls",
    "claude_roots",
    "codex_calls",
    "codex_root",
    "decode_claude",
    "decode_codex",
    "tool_log_folders",
]
