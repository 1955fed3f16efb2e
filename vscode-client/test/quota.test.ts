import assert from "node:assert/strict";
import { test } from "node:test";

import { readQuota } from "../src/view/quota";

/** The server's object as docs/quota.md describes it. */
function serverQuota(overrides: Record<string, unknown> = {}) {
  const cursorModels = { id: "cursor-models", label: "Cursor models", percentUsed: 12.5, usedCents: null, limitCents: null };
  const otherModels = { id: "other-models", label: "Other models", percentUsed: 64, usedCents: null, limitCents: null };
  return {
    available: true,
    message: null,
    reason: null,
    fetchedAt: "2026-11-30T11:00:00.000Z",
    stale: false,
    membershipType: "pro",
    billingCycleStart: "2026-11-10T00:00:00.000Z",
    billingCycleEnd: "2026-12-10T00:00:00.000Z",
    pools: [cursorModels, otherModels],
    binding: otherModels,
    totalPercentUsed: 60,
    plan: { usedCents: 1200, limitCents: 2000 },
    onDemand: { enabled: true, usedCents: 350, limitCents: null },
    ...overrides,
  };
}

test("no quota at all is null (nothing shown)", () => {
  assert.equal(readQuota(null), null);
  assert.equal(readQuota(undefined), null);
});

test("the server's object: pools, binding pool, on-demand in dollars, cycle end, staleness", () => {
  const q = readQuota(serverQuota());
  assert.equal(q?.available, true);
  assert.deepEqual(q?.pools, [
    { name: "Cursor models", percent: 12.5 },
    { name: "Other models", percent: 64 },
  ]);
  assert.deepEqual(q?.binding, { name: "Other models", percent: 64 });
  assert.deepEqual(q?.onDemand, { enabled: true, usedUsd: 3.5, limitUsd: null });
  assert.equal(q?.billingCycleEnd, "2026-12-10T00:00:00.000Z");
  assert.equal(q?.staleSince, undefined);
  assert.equal(readQuota(serverQuota({ stale: true }))?.staleSince, "2026-11-30T11:00:00.000Z");
  const team = readQuota(
    serverQuota({ pools: [{ id: "team", label: "Team pool", percentUsed: null, usedCents: 150, limitCents: 1000 }], binding: null }),
  );
  assert.deepEqual(team?.binding, { name: "Team pool", percent: 15 });
});

test("the raw cursor.com usage-summary shape also reads", () => {
  const q = readQuota({
    individualUsage: {
      plan: { used: 1200, limit: 2000, autoPercentUsed: 12.5, apiPercentUsed: 61, totalPercentUsed: 60 },
      onDemand: { enabled: true, used: 350, limit: 2000 },
    },
  });
  assert.deepEqual(q?.pools.map((p) => p.name), ["Cursor models", "Other models"]);
  assert.equal(q?.binding?.percent, 61);
  assert.deepEqual(q?.onDemand, { enabled: true, usedUsd: 3.5, limitUsd: 20 });
});

test("unavailable or unreadable shapes never become 0 %", () => {
  const login = readQuota(serverQuota({ available: false, message: "quota unavailable", reason: "login", pools: [], binding: null }));
  assert.deepEqual(login, { available: false, reason: "Cursor login expired", pools: [] });
  for (const value of [{}, { pools: [] }, { foo: 1 }, "text", 7, { pools: [{ label: "x", percentUsed: "12" }] }]) {
    const q = readQuota(value);
    assert.equal(q?.available, false, JSON.stringify(value));
    assert.equal(q?.binding, undefined);
  }
});
