"""Files CodeBurn owns: results and daily caches, the import store, config, locks."""

from codeburn.cache.config import (
    Budget,
    budget_from_config,
    cursor_sync_enabled,
    cursor_sync_env_off,
    load_config,
    set_config_value,
)
from codeburn.cache.daily_cache import DailyCache, load_daily, update_daily
from codeburn.cache.dirs import cache_dir, imports_dir
from codeburn.cache.files import (
    FolderUnusableError,
    LockTimeoutError,
    folder_problem,
    locked,
    read_json,
    write_cache_json,
)
from codeburn.cache.first_seen import FILE as FIRST_SEEN_FILE
from codeburn.cache.first_seen import (
    first_seen_lost,
    load_first_seen,
    save_first_seen,
)
from codeburn.cache.imports import (
    CoverageError,
    CoverageIndex,
    ImportSnapshot,
    ImportStoreError,
    ImportSummary,
    apply_sync,
    events_as_calls,
    import_file,
    iter_calls,
    iter_conversation_ids,
    iter_events,
    load_store,
    newest_synced_ms,
    other_accounts_coverage_end,
    remove_imported,
    store_fingerprint,
)
from codeburn.cache.leftovers import sweep_once
from codeburn.cache.local_files import LocalFiles
from codeburn.cache.results_cache import (
    CachedResults,
    db_fingerprint,
    load_results,
    save_results,
    sweep_old_versions,
)
from codeburn.cache.usage_slices import ConversationSums, DaySlices, Slice, Totals, merge_days

__all__ = [
    "FIRST_SEEN_FILE",
    "Budget",
    "CachedResults",
    "ConversationSums",
    "CoverageError",
    "CoverageIndex",
    "DailyCache",
    "DaySlices",
    "FolderUnusableError",
    "ImportSnapshot",
    "ImportStoreError",
    "ImportSummary",
    "LocalFiles",
    "LockTimeoutError",
    "Slice",
    "Totals",
    "apply_sync",
    "budget_from_config",
    "cache_dir",
    "cursor_sync_enabled",
    "cursor_sync_env_off",
    "db_fingerprint",
    "events_as_calls",
    "first_seen_lost",
    "folder_problem",
    "import_file",
    "imports_dir",
    "iter_calls",
    "iter_conversation_ids",
    "iter_events",
    "load_config",
    "load_daily",
    "load_first_seen",
    "load_results",
    "load_store",
    "locked",
    "merge_days",
    "newest_synced_ms",
    "other_accounts_coverage_end",
    "read_json",
    "remove_imported",
    "save_first_seen",
    "save_results",
    "set_config_value",
    "store_fingerprint",
    "sweep_old_versions",
    "sweep_once",
    "update_daily",
    "write_cache_json",
]
