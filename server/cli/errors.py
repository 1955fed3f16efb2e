"""The command line's own error: something the user can fix, printed as one line (exit 1)."""

from __future__ import annotations

from codeburn.providers import CodeBurnError


class UserError(CodeBurnError):
    """Something the user can fix; printed as `<command>: <message>`, exit code 1."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command
