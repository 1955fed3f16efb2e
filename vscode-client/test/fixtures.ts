/** Status and report objects shaped like the server's (docs/report-json.md), for the unit tests. */

import type { ConversationRow, ReportPayload, StatusPayload, Totals } from "../src/view/types";

export function status(overrides: Partial<StatusPayload> = {}): StatusPayload {
  return {
    schema: "codeburn.status/1",
    generatedAt: "2026-11-30T12:00:00.000Z",
    state: "ok",
    message: null,
    today: { cost: 4.56, estimatedCost: 0, calls: 12 },
    month: { cost: 123.4, estimatedCost: 0, calls: 340 },
    localEstimateNote: null,
    topModels: [
      { name: "Sonnet 4.5 (Thinking)", cost: 80.12, calls: 120 },
      { name: "GPT-5", cost: 20, calls: 1 },
    ],
    budget: { daily: null, monthly: null, level: "ok" },
    quota: null,
    cursorSync: null,
    ...overrides,
  };
}

export function totals(cost: number, estimatedCost = 0, calls = 1): Totals {
  return {
    cost,
    estimatedCost,
    billedCost: 0,
    calls,
    sessions: calls,
    inputTokens: 1000 * calls,
    outputTokens: 200 * calls,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
}

/** A conversation row of the report (docs/report-json.md `conversations`). */
export function conversation(id: string, title: string | null, project: string, t: Totals): ConversationRow {
  return {
    id,
    title,
    project,
    provider: "cursor",
    models: ["gpt-5"],
    first: "2026-11-03T09:00:00.000Z",
    last: "2026-11-03T10:00:00.000Z",
    ...t,
  };
}

export function report(): ReportPayload {
  return {
    schema: "codeburn.report/1",
    period: { label: "month", from: "2026-11-01", to: "2026-11-30", timezone: "Europe/Berlin" },
    totals: totals(10, 4, 30),
    providers: [{ id: "cursor", name: "Cursor", ...totals(10, 4, 30) }],
    models: [
      { model: "claude-4.5-sonnet-thinking", name: "Sonnet 4.5 (Thinking)", provider: "cursor", ...totals(7, 4, 20) },
      { model: "gpt-5", name: "GPT-5", provider: "cursor", ...totals(3, 0, 10) },
    ],
    projects: [
      { project: "-home-me-web-app", name: "web-app", path: "/home/me/web-app", ...totals(6, 2, 20) },
      { project: "<script>alert(1)</script>", name: "<script>alert(1)</script>", path: null, ...totals(2, 2, 5) },
      { project: "cursor", name: "(no project)", path: null, ...totals(2, 0, 5) },
    ],
    conversations: [
      conversation("c0ffee00-1111-2222-3333-444455556666", "Fix the login form", "-home-me-web-app", totals(5, 2, 12)),
      conversation("<b>4a1b2c3d-5555", "<script>alert(1)</script>", "<script>alert(1)</script>", totals(2, 0, 5)),
      conversation("9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff", null, "cursor", { ...totals(1.5, 0, 4), billedCost: 1.5 }),
    ],
    days: [
      { date: "2026-11-03", ...totals(6, 1, 10) },
      { date: "2026-11-30", ...totals(4, 3, 20) },
    ],
    unpricedModels: [{ model: "mystery-1", calls: 2, tokens: 5000 }],
    coverage: {
      ranges: [{ start: "2026-10-31T23:00:00.000Z", end: "2026-11-15T22:59:59.999Z", source: "import" }],
      localEstimateCost: 4,
    },
    cursorSync: null,
    warnings: ["2 bubbles skipped"],
  };
}
