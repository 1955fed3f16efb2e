"""`python -m codeburn.server.cli ...`: the `codeburn` command line."""

from codeburn.server.cli.main import run

run()
