"""Editor-facing layer: the usage service, the language server and the CLI."""

VERSION = "0.1.0"

__all__ = [
    "VERSION",
]
