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
  localEstimateNote,
  plural,
  splitText,
} from "../src/view/format";
import golden from "../../tests/golden/formatting.json";

// One rule with the Python side: both test suites read this file (the texts are written by hand).
test("money follows the shared golden file", () => {
  assert.ok(golden.money.length >= 20);
  for (const [value, text] of golden.money as Array<[number, string]>) {
    assert.equal(formatMoney(value), text, `formatMoney(${value})`);
  }
  assert.equal(formatMoney(Number.NaN), golden.moneyNotFinite);
  assert.equal(formatMoney(Number.POSITIVE_INFINITY), golden.moneyNotFinite);
});

test("the split of a cost follows the shared golden file", () => {
  assert.ok(golden.split.length >= 10);
  for (const [cost, billed, listPrice, estimated, text] of golden.split as Array<[number, number, number, number, string]>) {
    assert.equal(splitText(cost, billed, listPrice, estimated), text, `splitText(${cost}, ${billed}, ${listPrice}, ${estimated})`);
  }
});

test("tokens follow the shared golden file", () => {
  assert.ok(golden.tokens.length >= 20);
  for (const [value, text] of golden.tokens as Array<[number, string]>) {
    assert.equal(formatTokens(value), text, `formatTokens(${value})`);
  }
  assert.equal(formatTokens(Number.NaN), golden.tokensNotFinite);
});

test("the local-estimate note follows the shared golden file (the server's localEstimateNote)", () => {
  assert.ok(golden.localEstimateNote.length >= 3);
  for (const [usd, text] of golden.localEstimateNote as Array<[number, string]>) {
    assert.equal(localEstimateNote(usd), text, `localEstimateNote(${usd})`);
  }
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

test("counts, percentages, days", () => {
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
