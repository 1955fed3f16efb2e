"""The `codeburn` command line: reports, import, demo, text output."""

__all__: list[str] = []
