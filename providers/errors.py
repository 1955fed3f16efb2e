"""The one base of every error a person can act on: its message says what to do.

The tree, drawn once (each class lives with the code that raises it):

    CodeBurnError
    ├── CsvFormatError           providers.exports: an export that cannot be imported
    │   ├── ExportFileError        not a regular, readable file of a sane size
    │   └── ChooseUserError        a team export: name whose rows to import
    ├── CursorDbError            providers.sqlite_ro: Cursor's database could not be read
    │   ├── DatabaseMissingError, DatabaseLockedError
    │   └── DatabaseUnrecognizedError, DatabaseReadError
    ├── LockTimeoutError         cache.files: another CodeBurn holds a lock
    ├── ImportStoreError         cache.imports: the store of imported usage is damaged
    ├── CoverageError            cache.imports: a date range that cannot be covered
    ├── BaseUrlError             sync: CODEBURN_CURSOR_BASE_URL is not allowed
    ├── SyncError                sync: a sync from cursor.com failed (login, network, answer)
    ├── PeriodError              server.service: a report period that does not parse
    └── UserError                server.cli: a command line that cannot be run

Signals that never reach a person (a protobuf that does not decode, a busy CLI store, a
transcript too large to read) are plain exceptions of their own modules, caught where raised.
"""

from __future__ import annotations


class CodeBurnError(Exception):
    """A failure a person can act on; `str(error)` is one line that says how (never a secret)."""
