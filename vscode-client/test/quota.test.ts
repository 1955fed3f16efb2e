import assert from "node:assert/strict";
import { test } from "node:test";

import { readQuota } from "../src/quota";

test("no quota at all is null (nothing shown)", () => {
  assert.equal(readQuota(null), null);
  assert.equal(readQuota(undefined), null);
});

test("a pools list, with percentages or used/limit", () => {
  const q = readQuota({
    pools: [
      { id: "auto", name: "Cursor models", percentUsed: 42 },
      { label: "Other models", used: 150, limit: 1000 },
      { name: "broken" },
    ],
    onDemand: { enabled: true, usedUsd: 3, limitUsd: 20 },
  });
  assert.deepEqual(q?.pools, [
    { name: "Cursor models", percent: 42 },
    { name: "Other models", percent: 15 },
  ]);
  assert.equal(q?.bindingPercent, 42);
  assert.deepEqual(q?.onDemand, { enabled: true, usedUsd: 3, limitUsd: 20 });
});

test("the API's own shape (individualUsage.plan, amounts in cents)", () => {
  const q = readQuota({
    individualUsage: {
      plan: { used: 1200, limit: 2000, autoPercentUsed: 12.5, apiPercentUsed: 61, totalPercentUsed: 60 },
      onDemand: { enabled: true, used: 350, limit: 0 },
    },
  });
  assert.equal(q?.available, true);
  assert.deepEqual(q?.pools.map((p) => p.name), ["Cursor models", "Other models"]);
  assert.equal(q?.bindingPercent, 61);
  assert.deepEqual(q?.onDemand, { enabled: true, usedUsd: 3.5, limitUsd: null });
});

test("unreadable or unavailable shapes are unavailable, never 0 %", () => {
  for (const value of [{}, { pools: [] }, { foo: 1 }, "text", 7, { state: "error", message: "HTTP 500" }, { available: false }]) {
    const q = readQuota(value);
    assert.equal(q?.available, false, JSON.stringify(value));
    assert.deepEqual(q?.pools, []);
  }
  assert.equal(readQuota({ state: "error", message: "HTTP 500" })?.reason, "HTTP 500");
});
