"""Other AI coding tools' own logs on this machine: Claude Code and Codex (docs/other-tools.md)."""

from typing import TYPE_CHECKING

from codeburn.providers.lazy import lazy_surface

if TYPE_CHECKING:
    from codeburn.providers.agents.claude_code import (
        ClaudeCalls,
        ClaudeChunk,
        ClaudeFile,
        ClaudeRequest,
        claude_calls,
        decode_claude,
    )
    from codeburn.providers.agents.codex import (
        CodexChunk,
        CodexState,
        CodexUsage,
        codex_calls,
        decode_codex,
    )
    from codeburn.providers.agents.logs import ToolSnapshot, claude_roots, codex_root
    from codeburn.providers.agents.reader import ToolLogs, ToolRead, ToolStore
    from codeburn.providers.agents.state import LogChange, Part
else:  # imported on first use (see codeburn.providers.lazy)
    __getattr__ = lazy_surface(
        __name__,
        {
            "codeburn.providers.agents.claude_code": (
                "ClaudeCalls",
                "ClaudeChunk",
                "ClaudeFile",
                "ClaudeRequest",
                "claude_calls",
                "decode_claude",
            ),
            "codeburn.providers.agents.codex": (
                "CodexChunk",
                "CodexState",
                "CodexUsage",
                "codex_calls",
                "decode_codex",
            ),
            "codeburn.providers.agents.logs": ("ToolSnapshot", "claude_roots", "codex_root"),
            "codeburn.providers.agents.reader": ("ToolLogs", "ToolRead", "ToolStore"),
            "codeburn.providers.agents.state": ("LogChange", "Part"),
        },
    )

__all__ = [
    "ClaudeCalls",
    "ClaudeChunk",
    "ClaudeFile",
    "ClaudeRequest",
    "CodexChunk",
    "CodexState",
    "CodexUsage",
    "LogChange",
    "Part",
    "ToolLogs",
    "ToolRead",
    "ToolSnapshot",
    "ToolStore",
    "claude_calls",
    "claude_roots",
    "codex_calls",
    "codex_root",
    "decode_claude",
    "decode_codex",
]
