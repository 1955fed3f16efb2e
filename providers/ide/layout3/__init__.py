"""Cursor 3.x conversations: the headers table, conversation graphs, the one blob pass."""

# Imported at once: only a read of Cursor's database imports this package, and it needs it all.

from codeburn.providers.ide.layout3.blob_scan import (
    JsonRecords,
    PackedRecords,
    PackedRowids,
    blob_rowids,
    json_records,
    pack_records,
    packed_blob_rowids,
    unpack_records,
    unpack_rowids,
)
from codeburn.providers.ide.layout3.headers import META_PLACES, TIMES_PLACES
from codeburn.providers.ide.layout3.layout import (
    BUBBLES,
    ROOT,
    UNREADABLE,
    Layout3,
    any_json_rows,
    layout3_present,
    roots_present,
)
from codeburn.providers.ide.layout3.memo import (
    MEMO_VERSION,
    BlobMemo,
    memo_head_ok,
    memo_rows,
    read_memo,
    rows_bytes,
)
from codeburn.providers.ide.layout3.metas import ConversationMeta
from codeburn.providers.ide.layout3.reader import read_layout3

__all__ = [
    "BUBBLES",
    "MEMO_VERSION",
    "META_PLACES",
    "ROOT",
    "TIMES_PLACES",
    "UNREADABLE",
    "BlobMemo",
    "ConversationMeta",
    "JsonRecords",
    "Layout3",
    "PackedRecords",
    "PackedRowids",
    "any_json_rows",
    "blob_rowids",
    "json_records",
    "layout3_present",
    "memo_head_ok",
    "memo_rows",
    "pack_records",
    "packed_blob_rowids",
    "read_layout3",
    "read_memo",
    "roots_present",
    "rows_bytes",
    "unpack_records",
    "unpack_rowids",
]
