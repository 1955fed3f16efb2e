import assert from "node:assert/strict";
import { test } from "node:test";

import { formatRange, inferCsvRange, parseCsv, parseRangeInput } from "../src/view/csvRange";
import { localDay } from "../src/view/format";

test("CSV cells: BOM, CRLF, quotes with commas and doubled quotes", () => {
  const rows = parseCsv('\ufeffDate,Model,Cost\r\n"2026-11-02T10:00:00.000Z","a, ""b""",$1.25\r\n');
  assert.deepEqual(rows, [
    ["Date", "Model", "Cost"],
    ["2026-11-02T10:00:00.000Z", 'a, "b"', "$1.25"],
  ]);
});

test("the inferred range is the local days of the first and last rows", () => {
  const csv = [
    "Date,Kind,Model,Cost",
    "2026-11-20T10:00:00.000Z,Included,auto,Included",
    "2026-11-02T10:00:00.000Z,Included,auto,Included",
    "not a date,x,y,z",
    "2026-11-11T10:00:00.000Z,Included,auto,Included",
  ].join("\n");
  const range = inferCsvRange(csv);
  assert.deepEqual(range, {
    from: localDay(new Date("2026-11-02T10:00:00.000Z")),
    to: localDay(new Date("2026-11-20T10:00:00.000Z")),
  });
  assert.equal(formatRange(range!), `${range!.from} to ${range!.to}`);
  assert.equal(inferCsvRange("Model,Cost\nauto,1"), null);
  assert.equal(inferCsvRange("Date,Cost\n"), null);
});

test("range input: empty, dates, ISO times, epoch ms; errors a person can act on", () => {
  assert.deepEqual(parseRangeInput("  "), {});
  assert.deepEqual(parseRangeInput("2026-11-01 to 2026-11-30"), { from: "2026-11-01", to: "2026-11-30" });
  assert.deepEqual(parseRangeInput("2026-11-01..2026-11-30"), { from: "2026-11-01", to: "2026-11-30" });
  assert.deepEqual(parseRangeInput("1761955200000 to 1764547199999"), {
    from: "1761955200000",
    to: "1764547199999",
  });
  assert.deepEqual(parseRangeInput("2026-11-01T00:00:00Z to 2026-11-30T12:00:00.000+01:00"), {
    from: "2026-11-01T00:00:00Z",
    to: "2026-11-30T12:00:00.000+01:00",
  });
  assert.match((parseRangeInput("2026-11-01") as { error: string }).error, /FROM to TO/);
  assert.match((parseRangeInput("yesterday to today") as { error: string }).error, /not a date/);
  assert.match((parseRangeInput("2026-11-30 to 2026-11-01") as { error: string }).error, /starts/);
});
