"""`python -m codeburn.server [--tcp HOST:PORT]`: the language server (LSP over stdio)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m codeburn.server", description="The CodeBurn language server."
    )
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP (debugging)")
    parser.add_argument("--stdio", action="store_true", help="LSP over stdio (the default)")
    args = parser.parse_args(argv)
    from codeburn.server.lsp import serve  # noqa: PLC0415 - keep --help fast

    serve(args.tcp)


if __name__ == "__main__":
    main()
