import assert from "node:assert/strict";
import { test } from "node:test";

import {
  escapeHtml,
  escapeMarkdown,
  formatFigure,
  formatMoney,
  formatPercent,
  formatRelative,
  formatTokens,
  localDay,
  plural,
} from "../src/format";

test("money uses as many decimals as the amount needs", () => {
  assert.equal(formatMoney(0.0045), "$0.0045");
  assert.equal(formatMoney(0.05), "$0.050");
  assert.equal(formatMoney(1.75), "$1.75");
  assert.equal(formatMoney(4.56), "$4.56");
  assert.equal(formatMoney(123.4), "$123");
  assert.equal(formatMoney(1234.5), "$1,235");
  assert.equal(formatMoney(99.996), "$100");
  assert.equal(formatMoney(0.999), "$0.999");
  assert.equal(formatMoney(0.9996), "$1.00");
  assert.equal(formatMoney(0), "$0.00");
  assert.equal(formatMoney(0.00001), "<$0.0001");
  assert.equal(formatMoney(-2.5), "-$2.50");
  assert.equal(formatMoney(Number.NaN), "$?");
});

test("an estimated figure gets a tilde", () => {
  assert.equal(formatFigure(4.56, 0), "$4.56");
  assert.equal(formatFigure(4.56, 0.01), "~$4.56");
});

test("relative times", () => {
  const now = new Date("2026-11-30T12:00:00.000Z");
  assert.equal(formatRelative("2026-11-30T11:59:30.000Z", now), "just now");
  assert.equal(formatRelative("2026-11-30T11:48:00.000Z", now), "12 min ago");
  assert.equal(formatRelative("2026-11-30T11:59:00.000Z", now), "1 min ago");
  assert.equal(formatRelative("2026-11-30T09:00:00.000Z", now), "3 h ago");
  assert.equal(formatRelative("2026-11-29T11:00:00.000Z", now), "1 day ago");
  assert.equal(formatRelative("2026-11-25T12:00:00.000Z", now), "5 days ago");
  assert.equal(formatRelative("2026-11-30T12:05:00.000Z", now), "just now");
  assert.equal(formatRelative("garbage", now), "at an unknown time");
});

test("tokens, counts, percentages, days", () => {
  assert.equal(formatTokens(950), "950");
  assert.equal(formatTokens(12_345), "12k");
  assert.equal(formatTokens(1_500), "1.5k");
  assert.equal(formatTokens(4_500_000), "4.5M");
  assert.equal(plural(1, "call"), "1 call");
  assert.equal(plural(1200, "call"), "1,200 calls");
  assert.equal(formatPercent(42.4), "42%");
  assert.equal(formatPercent(7.53), "7.5%");
  assert.equal(localDay(new Date(2026, 0, 5, 23, 59)), "2026-01-05");
});

test("escaping keeps server text from becoming markup, links or icons", () => {
  const md = escapeMarkdown("[x](command:evil) <b>*hi*</b> $(flame) a_b");
  assert.ok(!md.includes("[x](command"));
  assert.ok(!md.includes("<b>"));
  assert.ok(!md.includes("$(flame)"));
  assert.ok(md.includes("a\\_b"));
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
});
