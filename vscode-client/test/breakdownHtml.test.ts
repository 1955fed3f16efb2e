import assert from "node:assert/strict";
import { test } from "node:test";

import { chartDays, daysBetween, monthEnd, renderBreakdown, renderBreakdownError } from "../src/view/breakdownHtml";
import type { ReportPayload } from "../src/view/types";
import { report, totals } from "./fixtures";

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

test("the period picker offers this month, last month and the last 30 days", () => {
  const html = renderBreakdown(reportOf("lastmonth", "2026-11-01", "2026-11-30", []), { nonce: "n" });
  const options = [...html.matchAll(/<option value="([^"]+)"( selected)?>([^<]+)<\/option>/g)];
  assert.deepEqual(
    options.map((m) => [m[1], m[3], Boolean(m[2])]),
    [
      ["month", "This month", false],
      ["lastmonth", "Last month", true],
      ["30days", "Last 30 days", false],
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
  assert.match(html, /2026-11-03: \$6\.00 \(\$1\.00 estimated\) · 10 calls/);
  assert.match(html, /2026-11-04: \$0\.00 · 0 calls/);
});

test("tables by model and by project, notes, escaping", () => {
  const html = renderBreakdown(report(), { nonce: "abc123", notice: "Cursor database busy, retrying" });
  assert.match(html, /Sonnet 4\.5 \(Thinking\) <span class="dim">claude-4\.5-sonnet-thinking<\/span>/);
  assert.match(html, /<td><span title="\/home\/me\/web-app">web-app<\/span><\/td>/);
  assert.match(html, /<td><span title="cursor">\(no project\)<\/span><\/td>/);
  assert.doesNotMatch(html, />-home-me-web-app</);
  assert.ok(!html.includes("<script>alert(1)</script>"));
  assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  assert.match(html, /Imported from a CSV export: 2026-10-31 to 2026-11-15/);
  assert.match(html, /Includes \$4\.00 of Cursor priced from local files/);
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
