"""The store of imported and synced Cursor usage: records, merge rules, the file."""

from codeburn.cache.imports.store import (
    CoverageError,
    CoverageIndex,
    ImportSnapshot,
    ImportStoreError,
    ImportSummary,
    apply_sync,
    events_as_calls,
    import_file,
    iter_calls,
    iter_conversation_events,
    iter_conversation_ids,
    iter_events,
    newest_synced_ms,
    other_accounts_coverage_end,
    remove_imported,
)
from codeburn.cache.imports.store import fingerprint as store_fingerprint
from codeburn.cache.imports.store import load as load_store

__all__ = [
    "CoverageError",
    "CoverageIndex",
    "ImportSnapshot",
    "ImportStoreError",
    "ImportSummary",
    "apply_sync",
    "events_as_calls",
    "import_file",
    "iter_calls",
    "iter_conversation_events",
    "iter_conversation_ids",
    "iter_events",
    "load_store",
    "newest_synced_ms",
    "other_accounts_coverage_end",
    "remove_imported",
    "store_fingerprint",
]
