"""The language server (pygls 2.x): bootstrap, commands, settings, status, progress, logging."""

from codeburn.server.lsp.bootstrap import serve

__all__ = [
    "serve",
]
