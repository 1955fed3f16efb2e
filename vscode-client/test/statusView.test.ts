import assert from "node:assert/strict";
import { test } from "node:test";

import {
  backgroundColorId,
  computeView,
  forecastLine,
  exactThroughText,
  syncLine,
  TOOLTIP_COMMANDS,
  type ViewInput,
} from "../src/view/statusView";
import { status } from "./fixtures";

const now = new Date("2026-11-30T12:00:00.000Z");

function view(overrides: Partial<ViewInput> = {}) {
  return computeView({
    state: { kind: "status", status: status() },
    show: "both",
    busy: false,
    now,
    syncSetting: true,
    ...overrides,
  });
}

test("status text shows today and month", () => {
  const v = view();
  assert.equal(v.text, "$(flame) $4.56 today · $123 month");
  assert.equal(v.background, undefined);
  assert.equal(v.click, "breakdown");
});

test("estimated figures get a tilde, and the show setting picks the figures", () => {
  const s = status({ today: { cost: 1.75, estimatedCost: 1.75, calls: 3 } });
  assert.equal(view({ state: { kind: "status", status: s } }).text, "$(flame) ~$1.75 today · $123 month");
  assert.equal(view({ state: { kind: "status", status: s }, show: "today" }).text, "$(flame) ~$1.75 today");
  assert.equal(view({ show: "month" }).text, "$(flame) $123 month");
});

test("a spinning icon while the user's sync or import runs", () => {
  assert.equal(view({ busy: true }).text, "$(sync~spin) $4.56 today · $123 month");
});

test("budget levels colour the background; nothing else does when data is fine", () => {
  const warn = status({ budget: { daily: 5, monthly: null, level: "warning" } });
  const over = status({ budget: { daily: 4, monthly: null, level: "over" } });
  assert.equal(view({ state: { kind: "status", status: warn } }).background, "warning");
  assert.equal(view({ state: { kind: "status", status: over } }).background, "error");
  assert.equal(backgroundColorId("warning"), "statusBarItem.warningBackground");
  assert.equal(backgroundColorId("error"), "statusBarItem.errorBackground");
  assert.equal(backgroundColorId(undefined), undefined);
  assert.match(view({ state: { kind: "status", status: over } }).tooltip, /over budget/);
});

test("unavailable data never shows as $0 and says where it looked", () => {
  const noData = status({
    state: "no-data",
    message: "No Cursor database at /home/me/.config/Cursor/User/globalStorage/state.vscdb",
    today: { cost: 0, estimatedCost: 0, calls: 0 },
    month: { cost: 0, estimatedCost: 0, calls: 0 },
  });
  const v = view({ state: { kind: "status", status: noData } });
  assert.equal(v.text, "$(flame) CodeBurn: no Cursor data");
  assert.ok(!v.text.includes("$0"));
  // No Cursor here is a normal state: the normal colour, and the tooltip says where CodeBurn
  // looked (the server's path) and which setting points it at a database elsewhere.
  assert.equal(v.background, undefined);
  assert.match(v.tooltip, /No Cursor database at \/home\/me\/\\\.config\/Cursor\/User\/globalStorage\/state\\\.vscdb/);
  assert.doesNotMatch(v.tooltip, /editorWarning|\$\(warning\)/);
  assert.match(
    v.tooltip,
    /set \[`codeburn\.cursor\.databasePath`\]\(command:codeburn\.openSettings\?%5B%22codeburn\.cursor\.databasePath%22%5D\) to that `state\.vscdb`/,
  );
  assert.doesNotMatch(v.tooltip, /\$0/);
  assert.match(v.tooltip, /\[Import CSV\]/);
  for (const [state, background] of [["db-unrecognized", "error"], ["error", "error"]] as const) {
    const w = view({ state: { kind: "status", status: status({ state, message: "boom" }) } });
    assert.equal(w.background, background);
    assert.ok(w.text.startsWith("$(flame) CodeBurn: "));
    assert.match(w.tooltip, /boom/);
  }
});

test("a locked database keeps the last figures, with a warning", () => {
  const v = view({ state: { kind: "status", status: status({ state: "db-locked", message: null }) } });
  assert.equal(v.text, "$(flame) $4.56 today · $123 month $(warning)");
  assert.equal(v.background, "warning");
  assert.match(v.tooltip, /Cursor database busy, retrying/);
});

test("starting, missing Python and a stopped server each say so and link to the logs", () => {
  const starting = view({ state: { kind: "starting" } });
  assert.equal(starting.text, "$(sync~spin) CodeBurn");
  assert.equal(starting.background, undefined);
  const python = view({ state: { kind: "python-missing", message: "CodeBurn needs Python 3.11" } });
  assert.equal(python.text, "$(flame) CodeBurn: Python needed");
  assert.equal(python.background, "error");
  assert.equal(python.click, "python");
  assert.match(python.tooltip, /Python 3\\\.11/);
  assert.match(python.tooltip, /\[Pick Python…\]\(command:codeburn\.selectPython\)/);
  assert.match(python.tooltip, /\[How to install\]\(https:\/\/www\.python\.org\/downloads\/\)/);
  assert.match(python.tooltip, /\[Show Logs\]\(command:codeburn\.showLogs\)/);
  const down = view({ state: { kind: "server-down", message: "crashed" } });
  assert.equal(down.text, "$(flame) CodeBurn: server stopped");
  assert.equal(down.background, "error");
  assert.match(down.tooltip, /\[Restart Server\]\(command:codeburn\.restartServer\)/);
});

test("the tooltip has the periods, the estimated parts, the top models, the note and the links", () => {
  const s = status({
    today: { cost: 4.56, estimatedCost: 1.2, calls: 12 },
    localEstimateNote: "~$1.20 of the estimate is from Cursor's local files — sync or import for exact figures",
  });
  const md = view({ state: { kind: "status", status: s } }).tooltip;
  assert.match(
    md,
    /Today: \*\*~\$4\.56\*\* \(\$3\.36 exact tokens at list price \+ ~\$1\.20 estimated\) · 12 calls/,
  );
  assert.match(md, /This month: \*\*\$123\*\* \(all exact tokens at list price\) · 340 calls/);
  assert.match(md, /- Sonnet 4\\\.5 \\\(Thinking\\\) — \$80\.12 · 120 calls/);
  assert.match(md, /- GPT\\-5 — \$20\.00 · 1 call$/m);
  assert.match(md, /_\\~\$1\\\.20 of the estimate is from Cursor's local files — sync or import for exact figures_/);
  for (const link of ["Sync now", "Import CSV", "Show breakdown", "Settings"]) {
    assert.match(md, new RegExp(`\\[${link}\\]\\(command:codeburn\\.`));
  }
  // Every command link in any tooltip is on the allow-list.
  for (const match of md.matchAll(/\(command:([\w.]+)/g)) {
    assert.ok((TOOLTIP_COMMANDS as readonly string[]).includes(match[1]), match[1]);
  }
});

test("server text cannot inject links into the trusted tooltip", () => {
  const s = status({ state: "error", message: "[click](command:workbench.action.terminal.new)" });
  const md = view({ state: { kind: "status", status: s } }).tooltip;
  assert.ok(!md.includes("](command:workbench"));
});

test("sync lines per §8.1", () => {
  assert.equal(syncLine(null, now), undefined);
  assert.equal(
    syncLine({ enabled: true, state: "ok", lastSuccessAt: "2026-11-30T11:48:00.000Z" }, now),
    "Synced from cursor.com 12 min ago",
  );
  assert.equal(
    syncLine({ enabled: true, state: "syncing-never", lastSuccessAt: null }, now),
    "Not synced from cursor.com yet",
  );
  assert.equal(syncLine({ enabled: false, state: "off", lastSuccessAt: null }, now), undefined);
  const login = syncLine(
    { enabled: true, state: "no-login", lastSuccessAt: null, errorCode: "login", error: "Cursor login expired, open Cursor to sign in again" },
    now,
  );
  assert.match(login ?? "", /\$\(warning\).*editorWarning-foreground.*Cursor login expired/);
  const network = syncLine({ enabled: true, state: "error", lastSuccessAt: null, errorCode: "network" }, now);
  assert.match(network ?? "", /Couldn't reach cursor\\\.com, will retry/);
});

test("the tooltip says when the environment turns sync off against the setting", () => {
  const s = status({
    cursorSync: { enabled: false, state: "off", lastSuccessAt: null },
    env: { cursorSyncDisabledByEnv: true },
  });
  assert.match(view({ state: { kind: "status", status: s } }).tooltip, /CODEBURN\\_CURSOR\\_SYNC=0/);
  assert.doesNotMatch(
    view({ state: { kind: "status", status: s }, syncSetting: false }).tooltip,
    /CODEBURN/,
  );
  assert.doesNotMatch(view().tooltip, /Synced|Not synced|CODEBURN\\_/);
});

test("quota: binding pool in the text, pools in the tooltip, 'quota unavailable' when unreadable", () => {
  const other = { id: "other-models", label: "Other models", percentUsed: 64, usedCents: null, limitCents: null };
  const s = status({
    quota: {
      available: true,
      pools: [{ id: "cursor-models", label: "Cursor models", percentUsed: 12, usedCents: null, limitCents: null }, other],
      binding: other,
      onDemand: { enabled: true, usedCents: 350, limitCents: 2000 },
      billingCycleEnd: "2026-12-10T00:00:00.000Z",
      stale: true,
      fetchedAt: "2026-11-30T11:00:00.000Z",
    },
  });
  const v = view({ state: { kind: "status", status: s } });
  assert.equal(v.text, "$(flame) $4.56 today · $123 month · Other models 64%");
  assert.match(
    v.tooltip,
    /Plan quota: Cursor models 12% · Other models 64% · on-demand \$3\.50 of \$20\.00 \(resets 2026\\-12\\-10, as of 1 h ago\)/,
  );
  const bad = view({ state: { kind: "status", status: status({ quota: { available: false, reason: "network", pools: [] } }) } });
  assert.match(bad.tooltip, /quota unavailable \(couldn't reach cursor\\\.com\)/);
  assert.equal(bad.text, "$(flame) $4.56 today · $123 month · quota unavailable");
  assert.doesNotMatch(bad.text, /%/);
  assert.doesNotMatch(view().tooltip, /quota/i);
});

test("unreadable conversations are said in the tooltip, in the warning colour", () => {
  const two = status({ unreadable: { count: 2, reasons: { encrypted: 1, undecodable: 1 } } });
  const tooltip = view({ state: { kind: "status", status: two } }).tooltip;
  assert.match(
    tooltip,
    /\$\(warning\) <span style="color:var\(--vscode-editorWarning-foreground\);">2 conversations in a newer Cursor format could not be read — sync or import for exact figures<\/span>/,
  );
  const one = status({ unreadable: { count: 1, reasons: { encrypted: 1 } } });
  assert.match(
    view({ state: { kind: "status", status: one } }).tooltip,
    /1 conversation in a newer Cursor format could not be read/,
  );
  // None, or a server that does not send the block: no line.
  const none = status({ unreadable: { count: 0, reasons: {} } });
  assert.doesNotMatch(view({ state: { kind: "status", status: none } }).tooltip, /could not be read/);
  assert.doesNotMatch(view().tooltip, /could not be read/);
});

test("the tooltip splits today and the month into parts that add up, and says all estimated", () => {
  const s = status({
    // The tooltip: "($0.418 of it estimated)" when all of it was.
    today: { cost: 0.418, estimatedCost: 0.418, billedCost: 0, listPriceCost: 0, calls: 7 },
    month: { cost: 8.554, estimatedCost: 0.664, billedCost: 6.76, listPriceCost: 1.13, calls: 40 },
    topModels: [{ name: "GPT-5", cost: 2, calls: 3, estimatedCost: 0.5 }],
    budget: { daily: 10, monthly: null, level: "ok" },
  });
  const md = view({ state: { kind: "status", status: s } }).tooltip;
  assert.match(md, /Today: \*\*~\$0\.418\*\* \(all estimated\) · 7 calls/);
  assert.ok(!md.includes("of it estimated"));
  const month = /This month: \*\*~\$([\d.]+)\*\* \(\$([\d.]+) billed by Cursor \+ \$([\d.]+) exact tokens at list price \+ ~\$([\d.]+) estimated\)/.exec(md);
  assert.ok(month, md);
  const [total, ...parts] = month.slice(1).map((x) => Math.round(Number(x) * 100));
  assert.deepEqual(parts, [676, 113, 66]);
  assert.equal(parts[0] + parts[1] + parts[2], total);
  // `~` on every estimated figure, the same way: top models and the budget line too.
  assert.match(md, /- GPT\\-5 — ~\$2\.00 · 3 calls/);
  assert.match(md, /Budget: ~\$0\.418 of \$10\.00 today/);
});

test("the tooltip names this month's top project by its name, never its slug", () => {
  const top = { project: "-home-me-work-api", name: "work/api", path: "/home/me/work/api", cost: 42 };
  const v = view({ state: { kind: "status", status: status({ topProject: top }) } });
  assert.match(v.tooltip, /^Top project this month: work\/api — \$42\.00$/m);
  assert.doesNotMatch(v.tooltip, /-home-me-work-api/);
  const none = view({ state: { kind: "status", status: status({ topProject: null }) } });
  assert.doesNotMatch(none.tooltip, /Top project/);
});

test("the top project line says what is in no project when that is more, with ~ where estimated", () => {
  // The month: web-app ~$0.210 of ~$13.94, ~$13.38 imported or of other machines.
  const month = { cost: 13.94, estimatedCost: 1.2, calls: 90, noProjectCost: 13.38, noProjectEstimatedCost: 0.99 };
  const top = { project: "-home-me-web-app", name: "web-app", path: "/home/me/web-app", cost: 0.21, estimatedCost: 0.21 };
  const md = view({ state: { kind: "status", status: status({ month, topProject: top }) } }).tooltip;
  assert.match(md, /^Top project this month: web\\-app — ~\$0\.210 · ~\$13\.38 not tied to a project$/m);
  // Exact figures keep no ~; a small part in no project is not said.
  const exact = { ...month, noProjectEstimatedCost: 0 };
  const exactTop = { ...top, cost: 5, estimatedCost: 0 };
  assert.match(
    view({ state: { kind: "status", status: status({ month: exact, topProject: { ...top, estimatedCost: 0 } }) } }).tooltip,
    /^Top project this month: web\\-app — \$0\.210 · \$13\.38 not tied to a project$/m,
  );
  const small = { ...exact, noProjectCost: 2 };
  assert.match(
    view({ state: { kind: "status", status: status({ month: small, topProject: exactTop }) } }).tooltip,
    /^Top project this month: web\\-app — \$5\.00$/m,
  );
  // Nothing in a project at all: said, not left out.
  assert.match(
    view({ state: { kind: "status", status: status({ month, topProject: null }) } }).tooltip,
    /^Top project this month: none — ~\$13\.38 not tied to a project$/m,
  );
  // An older server (no noProjectCost, no estimatedCost): the line as before.
  const older = { project: "p", name: "api", path: null, cost: 3 };
  assert.match(view({ state: { kind: "status", status: status({ topProject: older }) } }).tooltip, /^Top project this month: api — \$3\.00$/m);
});

const cycle = {
  start: "2026-11-15",
  end: "2026-12-14",
  source: "cursor" as const,
  cost: 98.5,
  estimatedCost: 0,
  billedCost: 98.5,
  listPriceCost: 0,
  calls: 400,
};

test("the cycle setting shows the billing cycle as the second figure", () => {
  const s = status({ cycle });
  assert.equal(view({ state: { kind: "status", status: s }, period: "cycle" }).text, "$(flame) $4.56 today · $98.50 cycle");
  assert.equal(view({ state: { kind: "status", status: s }, period: "month" }).text, "$(flame) $4.56 today · $123 month");
  // an older server without a cycle: the month, as before
  assert.equal(view({ period: "cycle" }).text, "$(flame) $4.56 today · $123 month");
  assert.match(view({ state: { kind: "status", status: s } }).tooltip, /This cycle \(Nov 15 – Dec 14\): \*\*\$98\.50\*\*/);
});

test("the forecast line: the projection and its band, with ~ unless all exact", () => {
  const forecast = {
    cycleEnd: "2026-12-31",
    projectedCost: 142.2,
    low: 120.4,
    high: 165,
    basis: "mixed" as const,
    pools: [],
    projectedOnDemand: null,
    onDemandLimit: null,
  };
  const s = status({ cycle, forecast });
  assert.equal(forecastLine(s), "At this pace: **~$142** by Dec 31 (~$120–$165)");
  assert.equal(
    forecastLine(status({ cycle, forecast: { ...forecast, basis: "exact" } })),
    "At this pace: **$142** by Dec 31 ($120–$165)",
  );
  assert.match(view({ state: { kind: "status", status: s } }).tooltip, /At this pace: \*\*~\$142\*\* by Dec 31/);
});

test("before a forecast exists the tooltip says from when; an older server says nothing", () => {
  const waiting = status({ cycle, forecast: null });
  assert.equal(forecastLine(waiting), "At this pace: forecast from the 3rd day with usage");
  assert.match(view({ state: { kind: "status", status: waiting } }).tooltip, /forecast from the 3rd day with usage/);
  assert.equal(forecastLine(status()), undefined);
  assert.doesNotMatch(view().tooltip, /At this pace/);
});

test("the exact part's reach: the time today, the date too on another day, in the locale", () => {
  const sync = (exactThrough: string | null) => ({
    enabled: true,
    state: "ok" as const,
    lastSuccessAt: "2026-11-30T11:48:00.000Z",
    exactThrough,
  });
  const at = sync("2026-11-30T11:05:00.000Z");
  assert.equal(exactThroughText(at, now, "en-GB", "UTC"), "exact to 11:05, estimated after");
  assert.equal(exactThroughText(at, now, "en-GB", "Europe/Berlin"), "exact to 12:05, estimated after");
  assert.equal(
    exactThroughText(sync("2026-11-29T14:05:00.000Z"), now, "en-GB", "UTC"),
    "exact to 29 Nov 14:05, estimated after",
  );
  // In Auckland `now` is 1 Dec 01:00: 11:30 UTC on the 30th is today there, 10:30 is not.
  assert.equal(
    exactThroughText(sync("2026-11-30T11:30:00.000Z"), now, "en-GB", "Pacific/Auckland"),
    "exact to 00:30, estimated after",
  );
  assert.equal(
    exactThroughText(sync("2026-11-30T10:30:00.000Z"), now, "en-GB", "Pacific/Auckland"),
    "exact to 30 Nov 23:30, estimated after",
  );
  assert.match(exactThroughText(at, now, "en-US", "UTC") ?? "", /^exact to 11:05 AM, estimated after$/);
  assert.equal(exactThroughText(sync(null), now), undefined);
  assert.equal(exactThroughText(sync("not a time"), now), undefined);
  assert.equal(
    syncLine(at, now, "en-GB", "UTC"),
    "Synced from cursor.com 12 min ago · exact to 11:05, estimated after",
  );
  const tooltip = view({
    state: { kind: "status", status: status({ cursorSync: at }) },
    locale: "en-GB",
    timeZone: "UTC",
  }).tooltip;
  assert.match(tooltip, /exact to 11:05, estimated after/);
});

test("the tooltip has one line per tool when another tool than Cursor counts", () => {
  const month = {
    cost: 10.5,
    estimatedCost: 2.5,
    calls: 40,
    providers: [
      { id: "claude-code", name: "Claude Code", cost: 6, estimatedCost: 0, calls: 20 },
      { id: "cursor", name: "Cursor", cost: 2.5, estimatedCost: 2.5, calls: 12 },
      { id: "codex", name: "Codex", cost: 2, estimatedCost: 0, calls: 8 },
    ],
  };
  const md = view({ state: { kind: "status", status: status({ month }) } }).tooltip;
  assert.match(md, /By tool this month:\n\n- Claude Code — \$6\.00 · 20 calls\n- Cursor — ~\$2\.50 · 12 calls\n- Codex — \$2\.00 · 8 calls/);
  assert.match(md, /exact tokens at API list prices/);
  assert.match(md, /^\*\*CodeBurn\*\* — AI spend$/m); // more than Cursor's
  const cursorOnly = { ...month, providers: [month.providers[1]] };
  const cursorOnlyTip = view({ state: { kind: "status", status: status({ month: cursorOnly }) } }).tooltip;
  assert.doesNotMatch(cursorOnlyTip, /By tool/);
  assert.match(cursorOnlyTip, /^\*\*CodeBurn\*\* — Cursor AI spend$/m);
});
