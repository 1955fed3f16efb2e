"""Other AI coding tools' own logs on this machine: Claude Code and Codex (docs/other-tools.md)."""

from typing import TYPE_CHECKING

from codeburn.providers.lazy import lazy_surface

if TYPE_CHECKING:
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
        ToolRead,
        ToolSnapshot,
        claude_roots,
        codex_root,
        take_snapshot,
        tool_log_folders,
    )
    from codeburn.providers.agents.reader import ToolLogs
    from codeburn.providers.agents.state import (
        LogChange,
        Part,
        ToolStore,
        joined_parts,
        one_part_day,
    )
    from codeburn.providers.agents.weighing import ClaudeWeighing, WeighedCalls, claude_calls
else:  # imported on first use (codeburn.providers.lazy): a command with no such logs
    __getattr__ = lazy_surface(__name__)  # imports the listing alone, never the decoders

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
    "joined_parts",
    "one_part_day",
    "take_snapshot",
    "tool_log_folders",
]
