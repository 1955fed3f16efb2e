import assert from "node:assert/strict";
import { test } from "node:test";

import { importMessage, removeMessage, syncMessage } from "../src/view/messages";

const base = {
  changed: true,
  added: 12,
  skipped: 3,
  total: 15,
  coverage: { start: "2026-11-01T00:00:00.000Z", end: "2026-11-20T22:59:59.999Z", inferred: true },
  tokens: 1000,
  replaced: ["cursor", "cursor-agent"],
};

test("import summary", () => {
  assert.equal(
    importMessage(base),
    "CodeBurn imported 12 rows, 3 already there (15 stored) covering 2026-11-01 to 2026-11-20 " +
      "(from its first and last rows). It replaces the local estimates of Cursor, Cursor Agent " +
      "for those days. Nothing was uploaded.",
  );
  assert.equal(
    importMessage({ ...base, skipped: 0, replaced: [], userApiKey: 2, future: 1 }),
    "CodeBurn imported 12 rows (15 stored) covering 2026-11-01 to 2026-11-20 (from its first and " +
      "last rows). Not counted as Cursor spend: 2 rows billed to your own API key. Refused: 1 row " +
      "dated after tomorrow. Nothing was uploaded.",
  );
  assert.match(
    importMessage({ ...base, changed: false, added: 0, skipped: 15 }),
    /nothing new — all 15 rows of this export were already imported/,
  );
});

test("sync and removal summaries", () => {
  assert.equal(
    syncMessage({ ...base, window: { start: "2026-11-01T00:00:00.000Z", end: "x" }, empty: false }),
    "CodeBurn synced 12 new rows from cursor.com since 2026-11-01.",
  );
  assert.match(syncMessage({ ...base, empty: true, added: 0, changed: false }), /has no usage/);
  assert.match(syncMessage({ ...base, changed: false, added: 0 }), /up to date/);
  assert.match(removeMessage({ removed: true, ranges: [{}, {}] }), /2 ranges/);
  assert.match(removeMessage({ removed: false, ranges: [] }), /no imported/);
});
