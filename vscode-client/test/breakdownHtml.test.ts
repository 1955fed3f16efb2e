import assert from "node:assert/strict";
import { test } from "node:test";

import {
  chartDays,
  costCards,
  cycleChart,
  cycleView,
  daysBetween,
  monthEnd,
  renderBreakdown,
  renderBreakdownError,
  spendHeading,
  SERIES_COLOURS,
} from "../src/view/breakdownHtml";
import type { ReportPayload } from "../src/view/types";
import { conversation, report, totals } from "./fixtures";

/** A report of `label` from `from` to `to` with spend on `days`. */
function reportOf(label: string, from: string, to: string, days: string[]): ReportPayload {
  return {
    ...report(),
    period: { label, from, to, timezone: "Europe/Berlin" },
    days: days.map((date) => ({ date, ...totals(2, 0.5, 3) })),
  };
}

/** Width and height attributes of the chart's SVG, and the width of every bar drawn. */
function geometry(html: string): { width: number; height: number; viewBox: string; barWidths: Set<number> } {
  const svg = /<svg class="chart"[^>]*width="(\d+)" height="(\d+)" viewBox="([^"]+)"/.exec(html);
  assert.ok(svg, "the chart's svg has pixel width, height and a 1:1 viewBox");
  const barWidths = new Set([...html.matchAll(/<rect class="(?:exact|estimated)" [^>]*width="([\d.]+)"/g)].map((m) => Number(m[1])));
  return { width: Number(svg[1]), height: Number(svg[2]), viewBox: svg[3], barWidths };
}

function drawnDays(html: string): string[] {
  return [...html.matchAll(/data-date="([\d-]+)"><title>[^<]*<\/title><rect class="hit"[^>]*><\/rect><rect class="exact" [^>]*height="([\d.]+)"/g)]
    .filter((m) => Number(m[2]) > 0)
    .map((m) => m[1]);
}

test("days of a range, across month ends", () => {
  assert.equal(daysBetween("2026-11-01", "2026-11-30").length, 30);
  assert.deepEqual(daysBetween("2026-02-27", "2026-03-01"), ["2026-02-27", "2026-02-28", "2026-03-01"]);
});

test("month ends, and the days a chart spans: all of the period asked for", () => {
  assert.equal(monthEnd("2026-12-01"), "2026-12-31");
  assert.equal(monthEnd("2028-02-10"), "2028-02-29");
  // This month on the 1st: the report holds one day, the chart the whole month.
  assert.equal(chartDays(reportOf("month", "2026-12-01", "2026-12-01", [])).length, 31);
  assert.equal(chartDays(reportOf("lastmonth", "2026-11-01", "2026-11-30", [])).length, 30);
  assert.equal(chartDays(reportOf("30days", "2026-11-01", "2026-12-01", [])).length, 31);
});

test("on the 1st of a month: one bar of normal size among 31 days, no giant label", () => {
  const html = renderBreakdown(reportOf("month", "2026-12-01", "2026-12-01", ["2026-12-01"]), { nonce: "n" });
  assert.equal(html.match(/<g class="day/g)?.length, 31);
  assert.equal(html.match(/<g class="day later"/g)?.length, 30); // Dec 2..31, still to come
  assert.deepEqual(drawnDays(html), ["2026-12-01"]);
  const g = geometry(html);
  // 31 slots of 14 px bar + 6 px gap, 4 px margins; 18 + 160 + 20 px high; drawn 1:1.
  assert.deepEqual([g.width, g.height, g.viewBox], [628, 198, "-4 -18 628 198"]);
  assert.deepEqual([...g.barWidths], [14]);
  assert.match(html, /\.chart text \{[^}]*font-size: 10px/);
  assert.doesNotMatch(html, /\.chart \{[^}]*width: 100%/);
  assert.match(html, /max \$2\.00 a day/);
  assert.match(html, /2026-12-15: still to come/);
  assert.match(html, /<text x="0" y="174" text-anchor="start">Dec 1<\/text>/); // not cut at the left edge
});

test("bars keep their pixel width whatever the number of days", () => {
  const every = (from: string, to: string) => daysBetween(from, to);
  const month = renderBreakdown(reportOf("lastmonth", "2026-11-01", "2026-11-30", every("2026-11-01", "2026-11-30")), { nonce: "n" });
  const thirty = renderBreakdown(reportOf("30days", "2026-11-01", "2026-12-01", every("2026-11-01", "2026-12-01")), { nonce: "n" });
  const one = renderBreakdown(reportOf("custom", "2026-11-05", "2026-11-05", ["2026-11-05"]), { nonce: "n" });
  assert.equal(drawnDays(month).length, 30);
  assert.equal(drawnDays(thirty).length, 31);
  assert.deepEqual([geometry(month).width, geometry(thirty).width, geometry(one).width], [608, 628, 28]);
  for (const html of [month, thirty, one]) {
    assert.deepEqual([...geometry(html).barWidths], [14]);
    assert.equal(geometry(html).height, 198);
  }
  assert.match(thirty, />Dec 1<\/text>/); // a month change is named on the axis…
  assert.doesNotMatch(thirty, />30<\/text>/); // …and the day before it is not labelled over it
  assert.match(month, />30<\/text><\/g>/); // the last day of a chart keeps its label
});

test("the period picker offers this month, last month, the last 30 days and the billing cycle", () => {
  const html = renderBreakdown(reportOf("lastmonth", "2026-11-01", "2026-11-30", []), { nonce: "n" });
  const options = [...html.matchAll(/<option value="([^"]+)"( selected)?>([^<]+)<\/option>/g)];
  assert.deepEqual(
    options.map((m) => [m[1], m[3], Boolean(m[2])]),
    [
      ["month", "This month", false],
      ["lastmonth", "Last month", true],
      ["30days", "Last 30 days", false],
      ["cycle", "This billing cycle", false],
    ],
  );
  assert.match(html, /postMessage\(\{ type: "period", period: event\.target\.value \}\)/);
  assert.match(html, /no spend in this period/);
});

test("one bar per day of the month, split exact/estimated", () => {
  const html = renderBreakdown(report(), { nonce: "abc123" });
  assert.equal(html.match(/<g class="day"/g)?.length, 30);
  // 2026-11-03: $6 of which $1 estimated; the tallest day is full height (160).
  const day3 = html.slice(html.indexOf('data-date="2026-11-03"'));
  assert.match(day3, /<rect class="exact" x="40" y="26.67" width="14" height="133.33">/);
  assert.match(day3, /<rect class="estimated" x="40" y="0.00" width="14" height="26.67">/);
  assert.match(html, /2026-11-03: ~\$6\.00 \(~\$1\.00 estimated\) · 10 calls/);
  assert.match(html, /2026-11-04: \$0\.00 · 0 calls/);
});

test("tables by model and by project, notes, escaping", () => {
  const html = renderBreakdown(report(), { nonce: "abc123", notice: "Cursor database busy, retrying" });
  // The display name, as in every table; the id only as its hover title (and in the JSON).
  assert.match(html, /<span title="claude-4\.5-sonnet-thinking">Sonnet 4\.5 \(Thinking\)<\/span>/);
  assert.ok(!html.includes('class="dim">claude-4.5-sonnet-thinking'));
  assert.match(html, /<td><span title="\/home\/me\/web-app">web-app<\/span><\/td>/);
  assert.match(html, /<td><span title="cursor">\(no project\)<\/span><\/td>/);
  assert.doesNotMatch(html, />-home-me-web-app</);
  assert.ok(!html.includes("<script>alert(1)</script>"));
  assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  assert.match(html, /Imported from a CSV export: 2026-10-31 to 2026-11-15/);
  // The same words as the tooltip and the CLI: a part of the estimate, with its `~`.
  assert.match(html, /<li>~\$4\.00 of the estimate is from Cursor&#39;s local files — sync or import for exact figures\.<\/li>/);
  assert.match(html, /Unpriced model mystery-1/);
  assert.match(html, /2 bubbles skipped/);
  assert.match(html, /class="notice">Cursor database busy, retrying/);
});

test("strict CSP: nothing remote, only nonce-tagged style and script", () => {
  for (const html of [renderBreakdown(report(), { nonce: "n0nce" }), renderBreakdownError("x <b>", "n0nce")]) {
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-n0nce'/);
    assert.match(csp, /style-src 'nonce-n0nce'/);
    assert.doesNotMatch(html, /https?:\/\//);
    assert.doesNotMatch(html, / style="/);
    for (const tag of html.match(/<(script|style)[^>]*>/g) ?? []) {
      assert.match(tag, /nonce="n0nce"/);
    }
  }
  assert.match(renderBreakdownError("x <b>", "n"), /x &lt;b&gt;/);
});

/** The cells of the Top conversations table, row by row, as HTML. */
function conversationRows(html: string): string[][] {
  const table = /<h2>Top conversations<\/h2>\n<table><thead><tr>(.*?)<\/tr><\/thead><tbody>\n(.*?)\n<\/tbody><\/table>/s.exec(html);
  assert.ok(table, "a Top conversations table");
  assert.equal(table[1], '<th>Title</th><th>Project</th><th class="num">Cost</th><th class="num">Calls</th>');
  return table[2].split("\n").map((row) => [...row.matchAll(/<td(?: class="num")?>(.*?)<\/td>/g)].map((m) => m[1]));
}

test("top conversations after the projects: title or the id's start, the project's name, cost with ~, calls", () => {
  const html = renderBreakdown(report(), { nonce: "n" });
  assert.ok(html.indexOf("<h2>By project</h2>") < html.indexOf("<h2>Top conversations</h2>"));
  assert.ok(html.indexOf("<h2>Top conversations</h2>") < html.indexOf('<ul class="notes">'));
  assert.deepEqual(conversationRows(html), [
    [
      '<span title="c0ffee00-1111-2222-3333-444455556666">Fix the login form</span>',
      '<span title="/home/me/web-app">web-app</span>',
      "~$5.00",
      "12",
    ],
    [
      '<span title="&lt;b&gt;4a1b2c3d-5555">&lt;script&gt;alert(1)&lt;/script&gt;</span>',
      '<span title="&lt;script&gt;alert(1)&lt;/script&gt;">&lt;script&gt;alert(1)&lt;/script&gt;</span>',
      "$2.00",
      "5",
    ],
    // Untitled: the id's first 8 characters, the whole id on hover; "cursor" is "(no project)".
    ['<span title="9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff">9f8e7d6c</span>', '<span title="cursor">(no project)</span>', "$1.50", "4"],
  ]);
  // Figures right-aligned, the title and project as text.
  assert.match(html, /<tr><td><span title="c0ffee00[^"]*">Fix the login form<\/span><\/td><td><span[^>]*>web-app<\/span><\/td><td class="num">~\$5\.00<\/td>/);
});

test("top conversations: ten at most, in the report's order; a project without a row shows its key", () => {
  const many = Array.from({ length: 12 }, (_, i) =>
    conversation(`conv-${String(i).padStart(2, "0")}-0000`, `Task ${i}`, i === 0 ? "-home-me-gone" : "-home-me-web-app", totals(20 - i, 0, 1)),
  );
  const rows = conversationRows(renderBreakdown({ ...report(), conversations: many }, { nonce: "n" }));
  assert.equal(rows.length, 10);
  assert.deepEqual(
    rows.map((r) => /">([^<]*)<\/span>$/.exec(r[0])?.[1]),
    Array.from({ length: 10 }, (_, i) => `Task ${i}`),
  );
  assert.equal(rows[0][1], '<span title="-home-me-gone">-home-me-gone</span>');
  assert.equal(rows[0][2], "$20.00");
  assert.equal(rows[9][2], "$11.00");
  // A blank title counts as none.
  const blank = conversationRows(renderBreakdown({ ...report(), conversations: [conversation("abcdef0123456789", "  ", "cursor", totals(1))] }, { nonce: "n" }));
  assert.equal(blank[0][0], '<span title="abcdef0123456789">abcdef01</span>');
});

test("no Top conversations table when the list is empty or missing (older servers)", () => {
  const { conversations: _omitted, ...older } = report();
  for (const r of [{ ...report(), conversations: [] }, older]) {
    const html = renderBreakdown(r, { nonce: "n" });
    assert.ok(!html.includes("Top conversations"));
    assert.match(html, /<h2>By project<\/h2>/);
  }
});

/** The money figures of the cost cards: the total and its three parts, as shown. */
function cards(html: string): { total: string; parts: string[]; note: string | undefined } {
  const total = /<div class="cost">Cost<b>([^<]+)<\/b>(?:<small class="dim">([^<]+)<\/small>)?/.exec(html);
  assert.ok(total, "a Cost card");
  const parts = [...html.matchAll(/<div class="part" data-part="[^"]+">[^<]+<b>([^<]+)<\/b>/g)].map((m) => m[1]);
  return { total: total[1], parts, note: total[2] };
}

/** Cents (or mills) of a shown money text: `~$1,234.56` → 123456. */
function units(text: string): number {
  return Number(text.replace(/^~/, "").replace(/^\$/, "").replace(/[,.]/g, ""));
}

test("the cost cards: billed, exact tokens at list price and estimated add up to the total as shown", () => {
  // The page: Cost ~$8.55, Estimated $0.664, Billed $6.76 — the $1.13 at list price named nowhere.
  const t = { ...totals(8.554, 0.664, 40), billedCost: 6.76, listPriceCost: 1.13 };
  const html = renderBreakdown({ ...report(), totals: t }, { nonce: "n" });
  const shown = cards(html);
  assert.equal(shown.total, "~$8.55");
  assert.deepEqual(shown.parts, ["$6.76", "$1.13", "~$0.66"]);
  assert.equal(shown.note, undefined);
  assert.match(html, /Billed by Cursor<b>\$6\.76<\/b>/);
  assert.match(html, /Exact tokens at list price<b>\$1\.13<\/b>/);
  assert.match(html, /Estimated<b>~\$0\.66<\/b>/);
  // Each part rounded on its own would read $1.01 + $1.01 + $1.01 = $3.03 for a total of $3.02.
  const thirds = { ...totals(3.015, 1.005, 3), billedCost: 1.005, listPriceCost: 1.005 };
  const even = cards(costCards(thirds));
  assert.equal(even.total, "~$3.02");
  assert.equal(even.parts.reduce((sum, p) => sum + units(p), 0), units(even.total));
});

test("all estimated: said on the Cost card, the parts still add up", () => {
  const shown = cards(costCards({ ...totals(0.418, 0.418, 3), listPriceCost: 0 }));
  assert.equal(shown.total, "~$0.418");
  assert.equal(shown.note, "all estimated");
  assert.deepEqual(shown.parts, ["$0.00", "$0.00", "~$0.418"]);
});

test("the cards add up for many mixes of billed, list-price and estimated dollars", () => {
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let n = 0; n < 2000; n++) {
    const size = [0.01, 1, 100, 5000][n % 4];
    const parts = [next() * size, next() < 0.2 ? 0 : next() * size, next() * size];
    const cost = parts[0] + parts[1] + parts[2];
    const t = { ...totals(cost, parts[2], 1), billedCost: parts[0], listPriceCost: parts[1] };
    const shown = cards(costCards(t));
    const exact = shown.parts.filter((p) => !p.includes("&lt;"));
    assert.equal(exact.reduce((sum, p) => sum + units(p), 0), units(shown.total), JSON.stringify({ parts, shown }));
  }
});

test("diagnostics (facts of the read, not warnings) stay off the page; warnings are shown", () => {
  const html = renderBreakdown(
    { ...report(), warnings: ["Cursor history exceeds the scan budget"], diagnostics: ["skipped 2 Cursor tool-call rows that are not sessions"] },
    { nonce: "n" },
  );
  assert.match(html, /scan budget/);
  assert.ok(!html.includes("tool-call rows"));
});

test("numeric headers are right-aligned over their right-aligned figures", () => {
  const html = renderBreakdown(report(), { nonce: "n" });
  const heads = [...html.matchAll(/<thead><tr>(.*?)<\/tr><\/thead>/g)].map((m) =>
    [...m[1].matchAll(/<th( class="num")?>([^<]*)<\/th>/g)].map((h) => `${h[2]}${h[1] ? ":num" : ""}`),
  );
  assert.deepEqual(heads, [
    ["Model", "Provider", "Calls:num", "Input:num", "Output:num", "Cache:num", "Cost:num", "Estimated:num"],
    ["Project", "Calls:num", "Sessions:num", "Tokens:num", "Cost:num", "Estimated:num"],
    ["Title", "Project", "Cost:num", "Calls:num"],
  ]);
  // Each row's cells: the same columns right-aligned as its header.
  for (const table of html.match(/<table>.*?<\/table>/gs) ?? []) {
    const head = [...(/<thead>(.*?)<\/thead>/s.exec(table)?.[1] ?? "").matchAll(/<th( class="num")?>/g)].map((m) => Boolean(m[1]));
    for (const row of table.match(/<tr><td.*?<\/tr>/g) ?? []) {
      assert.deepEqual([...row.matchAll(/<td( class="num")?>/g)].map((m) => Boolean(m[1])), head);
    }
  }
  assert.match(html, /th\.num, td\.num \{ text-align: right;/);
});

/** WCAG 2 relative luminance of an opaque `#rrggbb`. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

/** WCAG 2 contrast ratio of two opaque colours (1 to 21). */
function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** `#rrggbbaa` drawn over an opaque background. */
function over(hex: string, background: string): string {
  const alpha = parseInt(hex.slice(7, 9), 16) / 255;
  const mix = (i: number) => {
    const fg = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16);
    const bg = parseInt(background.slice(1 + 2 * i, 3 + 2 * i), 16);
    return Math.round(fg * alpha + bg * (1 - alpha)).toString(16).padStart(2, "0");
  };
  return `#${mix(0)}${mix(1)}${mix(2)}`;
}

// The editor backgrounds (the webview's body) of VS Code's built-in themes of each kind:
// Dark Modern, Dark+/Dark (Visual Studio), 2026 Dark, and the #202020 measured in code-server;
// Light Modern/Light+/2026 Light and the light side panels; the high-contrast themes.
const BACKGROUNDS: Record<keyof typeof SERIES_COLOURS, string[]> = {
  "vscode-dark": ["#1F1F1F", "#1E1E1E", "#121314", "#202020", "#252526"],
  "vscode-light": ["#FFFFFF", "#F8F8F8", "#F3F3F3"],
  "vscode-high-contrast": ["#000000"],
  "vscode-high-contrast-light": ["#FFFFFF"],
};

test("contrast: the ratio is WCAG's, and the theme's own charts.orange failed it", () => {
  assert.equal(contrast("#000000", "#FFFFFF").toFixed(1), "21.0");
  assert.equal(contrast("#777777", "#777777"), 1);
  // What the estimated bars were on the dark theme: charts.orange = the find-match highlight.
  assert.equal(over("#EA5C0055", "#202020"), "#633415"); // rgb(99,52,21); measured: rgb(97,50,20)
  assert.ok(contrast(over("#EA5C0055", "#202020"), "#202020") < 2);
});

test("chart series stand out 3:1 against every theme's background, and the page uses them", () => {
  const html = renderBreakdown(report(), { nonce: "n" });
  for (const [kind, colours] of Object.entries(SERIES_COLOURS) as Array<[keyof typeof SERIES_COLOURS, { exact: string; estimated: string }]>) {
    for (const background of BACKGROUNDS[kind]) {
      for (const [series, colour] of Object.entries(colours)) {
        const ratio = contrast(colour, background);
        assert.ok(ratio >= 3, `${kind} ${series} ${colour} on ${background}: ${ratio.toFixed(2)}:1`);
      }
    }
    const rule = new RegExp(`body\\.${kind} \\{ --series-exact: ${colours.exact}; --series-estimated: ${colours.estimated}; \\}`);
    assert.match(html, rule, kind);
  }
  // A high-contrast light body has both high-contrast classes: its own rule must come last.
  assert.ok(html.indexOf("body.vscode-high-contrast-light {") > html.indexOf("body.vscode-high-contrast {"));
  // Bars and legend swatches take the series colours, never the theme's translucent charts.orange.
  assert.match(html, /\.chart \.exact \{ fill: var\(--series-exact\); \}/);
  assert.match(html, /\.chart \.estimated \{ fill: var\(--series-estimated\); \}/);
  assert.match(html, /\.swatch\.estimated \{ background: var\(--series-estimated\); \}/);
  assert.doesNotMatch(html, /--vscode-charts-(orange|blue)/);
});

const forecast = {
  cycleEnd: "2026-12-14",
  projectedCost: 30,
  low: 6,
  high: 66,
  basis: "exact" as const,
  pools: [],
  projectedOnDemand: null,
  onDemandLimit: null,
};

test("the cycle view: cumulative spend, the projection and its band, included usage and on-demand lines", () => {
  const r = reportOf("cycle", "2026-11-15", "2026-11-17", ["2026-11-15", "2026-11-16", "2026-11-17"]);
  const view = cycleView({
    cycle: { end: "2026-12-14" },
    forecast,
    quota: { available: true, plan: { limitCents: 2000 }, onDemand: { limitCents: 5000 } },
  });
  assert.deepEqual(view, { end: "2026-12-14", forecast, includedUsd: 20, onDemandLimitUsd: 50 });
  const svg = cycleChart(r, view!);
  // three days of $2: the line climbs to $6 on the third of 30 days, then the projection runs on
  const spent = /<polyline class="spent" points="([^"]+)"/.exec(svg);
  assert.ok(spent);
  assert.equal(spent[1].split(" ").length, 3);
  assert.match(svg, /<polygon class="band"/);
  assert.match(svg, /<line class="projection"[^>]*><title>projected \$30\.00 by 2026-12-14/);
  assert.match(svg, /included usage \$20\.00/);
  assert.match(svg, /on-demand limit \$70\.00/); // above the included usage
  // the tooltip's wording: `~` unless every figure is exact, the day as people write it
  assert.match(svg, /At this pace: \$30\.00 by Dec 14 \(\$6\.00–\$66\.00\)<\/p>/);
  assert.match(cycleChart(r, { ...view!, forecast: { ...forecast, basis: "mixed" } }), /At this pace: ~\$30\.00 by Dec 14 \(~\$6\.00–\$66\.00\)/);
  const page = renderBreakdown(r, { nonce: "n", period: "cycle", cycle: view });
  assert.match(page, /<h2>This billing cycle<\/h2>/);
  assert.match(page, /<option value="cycle" selected>/);
  // another period, or an older server without a cycle: no cycle view
  assert.doesNotMatch(renderBreakdown(r, { nonce: "n", period: "month", cycle: view }), /This billing cycle<\/h2>/);
  assert.equal(cycleView({}), undefined);
});

test("the cycle view before a forecast, and without a readable quota", () => {
  const r = reportOf("cycle", "2026-11-15", "2026-11-16", ["2026-11-15"]);
  const view = cycleView({ cycle: { end: "2026-12-14" }, forecast: null, quota: { available: false } });
  assert.deepEqual(view, { end: "2026-12-14", forecast: null, includedUsd: null, onDemandLimitUsd: null });
  const svg = cycleChart(r, view!);
  assert.match(svg, /Forecast from the 3rd day with usage/);
  assert.doesNotMatch(svg, /class="(band|projection|included|ondemand)"/);
});

test("one project row per folder across tools, split by tool when more than one tool counts", () => {
  const base = report();
  const split = [
    { id: "claude-code", name: "Claude Code", cost: 4, estimatedCost: 0, calls: 9 },
    { id: "cursor", name: "Cursor", cost: 2, estimatedCost: 2, calls: 11 },
  ];
  const several: ReportPayload = {
    ...base,
    providers: [...base.providers, { id: "claude-code", name: "Claude Code", ...totals(4, 0, 9) }],
    projects: [{ ...base.projects[0], providers: split }, ...base.projects.slice(1)],
  };
  const html = renderBreakdown(several, { nonce: "n" });
  assert.match(html, /<th>Tools<\/th>/);
  assert.match(html, /<td>Claude Code \$4\.00 · Cursor ~\$2\.00<\/td>/);
  assert.doesNotMatch(renderBreakdown(base, { nonce: "n" }), /<th>Tools<\/th>/);
});

test("the heading says AI spend when another tool than Cursor's is counted", () => {
  const r = reportOf("month", "2026-11-15", "2026-11-17", ["2026-11-15"]);
  assert.equal(spendHeading(r), "Cursor spend");
  const tools = { ...r, providers: [...r.providers, { ...r.providers[0], id: "claude-code", name: "Claude Code" }] };
  assert.equal(spendHeading(tools), "AI spend");
  assert.match(renderBreakdown(tools, { nonce: "n", period: "month" }), /<h1>AI spend<\/h1>/);
});
