import assert from "node:assert/strict";
import { test } from "node:test";

import { DEFAULTS, readSettings } from "../src/view/settings";

test("defaults when nothing is set", () => {
  assert.deepEqual(readSettings(() => undefined), DEFAULTS);
});

test("bad values fall back; the interval never goes below 10", () => {
  const values: Record<string, unknown> = {
    "statusBar.show": "weekly",
    refreshIntervalSeconds: 3,
    "budget.daily": -5,
    "budget.monthly": "lots",
    "cursorSync.enabled": "no",
    "python.interpreter": "  /usr/bin/python3.12 ",
  };
  const s = readSettings((key) => values[key]);
  assert.equal(s.show, "both");
  assert.equal(s.refreshIntervalSeconds, 10);
  assert.equal(s.budgetDaily, 0);
  assert.equal(s.budgetMonthly, 0);
  assert.equal(s.syncEnabled, true);
  assert.equal(s.interpreter, "/usr/bin/python3.12");
});

test("the status bar period: month or cycle, anything else is the month", () => {
  assert.equal(readSettings((key) => (key === "statusBar.period" ? "cycle" : undefined)).period, "cycle");
  assert.equal(readSettings((key) => (key === "statusBar.period" ? "week" : undefined)).period, "month");
  assert.equal(DEFAULTS.period, "month");
});
