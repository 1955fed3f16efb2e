import assert from "node:assert/strict";
import { test } from "node:test";

import { daysBetween, renderBreakdown, renderBreakdownError } from "../src/breakdownHtml";
import { report } from "./fixtures";

test("days of a range, across month ends", () => {
  assert.equal(daysBetween("2026-11-01", "2026-11-30").length, 30);
  assert.deepEqual(daysBetween("2026-02-27", "2026-03-01"), ["2026-02-27", "2026-02-28", "2026-03-01"]);
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
  assert.match(html, /<td>-home-me-app<\/td>/);
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
