"""`python -m codeburn.server.cli ...`: the `codeburn` command line."""

import sys

from codeburn.server.cli.main import main

sys.exit(main())
