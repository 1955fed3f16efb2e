/** Text formatting shared by the status bar, tooltip, messages and the breakdown. No `vscode`. */

/** Thousands separators in the integer part of a plain decimal string: `1234567.89` → `1,234,567.89`. */
function grouped(text: string): string {
  const [whole, decimals] = text.split(".");
  const withCommas = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return decimals === undefined ? withCommas : `${withCommas}.${decimals}`;
}

/**
 * US dollars, the rule the Python side shares (tests/golden/formatting.json): rounded half up on
 * the exact value, with as many decimals as the rounded amount needs — `$0.0045`, `$0.050`,
 * `$1.75`, `$123`, `$1,235`; amounts that round to nothing at four decimals read `<$0.0001` (never a
 * misleading `$0.00`).
 */
export function formatMoney(value: number): string {
  if (!Number.isFinite(value)) {
    return "$?";
  }
  const sign = value < 0 ? "-" : "";
  const abs = Math.abs(value);
  if (abs === 0) {
    return "$0.00";
  }
  // toFixed rounds the exact binary value, ties away from zero: Python's Decimal ROUND_HALF_UP.
  const four = abs.toFixed(4);
  if (Number(four) === 0) {
    return `${sign}<$0.0001`;
  }
  if (Number(four) < 0.01) {
    return `${sign}$${four}`;
  }
  const three = abs.toFixed(3);
  if (Number(three) < 1) {
    return `${sign}$${three}`;
  }
  const cents = abs.toFixed(2);
  return `${sign}$${grouped(Number(cents) < 100 ? cents : wholeDigits(abs))}`;
}

/**
 * A non-negative amount rounded half up to a whole number, in plain digits: `toFixed` writes
 * `1e+21` from 10^21 on, where every double is already a whole number (BigInt gives its exact
 * digits, as Python's Decimal does).
 */
function wholeDigits(value: number): string {
  return value < 1e21 ? value.toFixed(0) : BigInt(value).toString();
}

/** A money figure with `~` in front when any part of it is estimated. */
export function formatFigure(cost: number, estimatedCost: number): string {
  return `${estimatedCost > 0 ? "~" : ""}${formatMoney(cost)}`;
}

/** Whole numbers with thousands separators. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

const TOKEN_UNITS: ReadonlyArray<readonly [bigint, string]> = [
  [1_000n, "K"],
  [1_000_000n, "M"],
  [1_000_000_000n, "B"],
];

/** `count / divisor` rounded half up, for non-negative integers. */
function halfUpDiv(count: bigint, divisor: bigint): bigint {
  return (2n * count + divisor) / (2n * divisor);
}

/**
 * Token counts in three significant figures at most, as the Python side writes them:
 * `950`, `1.2K`, `14.8K`, `123K`, `3.2M`, `1.5B` (999.5K and up read `1.0M`). Whole numbers are
 * exact (BigInt) at any size, as Python's integers are.
 */
export function formatTokens(value: number): string {
  if (!Number.isFinite(value)) {
    return "?";
  }
  const sign = value < 0 ? "-" : "";
  // Math.round: half up for the non-negative value, exact for doubles past 2^53.
  let count = BigInt(Math.round(Math.abs(value)));
  if (count < 1000n) {
    return `${sign}${count}`;
  }
  for (let n = 0; n < TOKEN_UNITS.length; n++) {
    const [unit, suffix] = TOKEN_UNITS[n];
    const last = n === TOKEN_UNITS.length - 1;
    if (!last && count >= TOKEN_UNITS[n + 1][0]) {
      continue;
    }
    const tenths = halfUpDiv(count * 10n, unit);
    if (tenths < 1000n) {
      return `${sign}${tenths / 10n}.${tenths % 10n}${suffix}`;
    }
    const whole = halfUpDiv(count, unit);
    if (whole < 1000n || last) {
      return `${sign}${whole}${suffix}`;
    }
    count = whole * unit;
  }
  return `${sign}${count}`;
}

/** `1 call`, `2 calls`. */
export function plural(count: number, word: string): string {
  return `${formatCount(count)} ${word}${count === 1 ? "" : "s"}`;
}

/** How long ago an ISO time was: `just now`, `12 min ago`, `3 h ago`, `2 days ago`. */
export function formatRelative(iso: string, now: Date): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) {
    return "at an unknown time";
  }
  const seconds = (now.getTime() - then) / 1000;
  if (seconds < 45) {
    return "just now";
  }
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.round(seconds / 3600);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  const days = Math.round(seconds / 86400);
  return days === 1 ? "1 day ago" : `${days} days ago`;
}

/** A percentage without noise: `42%`, `7.5%`, `0.3%`. */
export function formatPercent(value: number): string {
  if (!Number.isFinite(value)) {
    return "?%";
  }
  const rounded = Math.abs(value) >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${rounded}%`;
}

/** The local calendar day of a Date as `YYYY-MM-DD`. */
export function localDay(date: Date): string {
  const y = date.getFullYear();
  const m = String(date.getMonth() + 1).padStart(2, "0");
  const d = String(date.getDate()).padStart(2, "0");
  return `${y}-${m}-${d}`;
}

/** Escapes text for Markdown (and the HTML the trusted tooltip allows). */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/[\\`*_{}[\]()#+\-.!|~>]/g, (ch) => `\\${ch}`)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;");
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** The three parts of a cost (docs/report-json.md: billed + list price + estimated = cost), in this order. */
export const SPLIT_LABELS = ["billed by Cursor", "exact tokens at list price", "estimated"] as const;

function placesOf(text: string): number {
  const dot = text.indexOf(".");
  return dot < 0 ? 0 : text.length - dot - 1;
}

/** Whole units of a non-negative amount rounded half up at `places` decimals (as formatMoney). */
function unitsOf(value: number, places: number): number {
  return Number(value.toFixed(places).replace(".", ""));
}

function unitsText(units: number, places: number): string {
  if (places === 0) {
    return grouped(String(units));
  }
  const digits = String(units).padStart(places + 1, "0");
  return grouped(`${digits.slice(0, -places)}.${digits.slice(-places)}`);
}

/**
 * `parts` (billed, list price, estimated) as money texts that add up to `formatMoney(cost)` on
 * screen: the total's decimals for each, rounded half up, then moved by largest remainder; the
 * estimated part carries `~`, a part that rounds to nothing reads `<$0.01`, and none `$0.00`. The same rule as
 * the Python side's `split_money` (tests/golden/formatting.json).
 */
export function splitMoney(cost: number, parts: readonly number[]): string[] {
  const total = formatMoney(cost);
  const values = parts.map((p) => (Number.isFinite(p) ? Math.max(0, p) : 0));
  let texts: string[];
  if (total.startsWith("<") || total.startsWith("$?") || cost >= 1e15) {
    texts = values.map(formatMoney);
  } else {
    const places = placesOf(total);
    const scale = 10 ** places;
    const units = values.map((v) => unitsOf(v, places));
    const rest = values.map((v, i) => v * scale - units[i]);
    let gap = Number(total.replace(/[$,.]/g, "")) - units.reduce((a, b) => a + b, 0);
    while (gap !== 0) {
      const step = gap > 0 ? 1 : -1;
      const pool = values.flatMap((v, i) => (v > 0 && (step > 0 || units[i] > 0) ? [i] : []));
      if (pool.length === 0) {
        break;
      }
      // The first of equals, as Python's max/min.
      const pick = pool.reduce((a, b) => ((step > 0 ? rest[b] > rest[a] : rest[b] < rest[a]) ? b : a));
      units[pick] += step;
      rest[pick] -= step;
      gap -= step;
    }
    const unit = unitsText(1, places);
    texts = units.map((u, i) =>
      values[i] === 0 ? "$0.00" : u === 0 ? `<$${unit}` : `$${unitsText(u, places)}`,
    );
  }
  return texts.map((t, i) => (i === 2 && values[i] > 0 ? `~${t}` : t));
}

/**
 * `$6.76 billed by Cursor + $1.13 exact tokens at list price + ~$0.66 estimated`, or `all
 * estimated` (`all billed by Cursor`, …) when one part is the whole; "" for $0.
 */
export function splitText(cost: number, billed: number, listPrice: number, estimated: number): string {
  const parts = [billed, listPrice, estimated];
  const shown = parts.flatMap((p, i) => (p > 0 ? [i] : []));
  if (shown.length === 0 || !(cost > 0)) {
    return "";
  }
  if (shown.length === 1) {
    return `all ${SPLIT_LABELS[shown[0]]}`;
  }
  const texts = splitMoney(cost, parts);
  return shown.map((i) => `${texts[i]} ${SPLIT_LABELS[i]}`).join(" + ");
}

/**
 * The note under a total while local Cursor dollars remain: the part of the estimate that Cursor's
 * local files gave and a sync or an import replaces, said as a part of the estimate (with its
 * `~`), never as a second amount. The server's `localEstimateNote` (Python `local_estimate_note`)
 * says the same words; tests/golden/formatting.json pins both.
 */
export function localEstimateNote(usd: number): string {
  return `${formatFigure(usd, 1)} of the estimate is from Cursor's local files — sync or import for exact figures`;
}

/** The parts of a totals object; `listPriceCost` from an older server is what the others leave. */
export function costParts(row: {
  cost: number;
  estimatedCost: number;
  billedCost?: number;
  listPriceCost?: number;
}): [number, number, number] {
  const billed = row.billedCost ?? 0;
  const listPrice = row.listPriceCost ?? Math.max(0, row.cost - billed - row.estimatedCost);
  return [billed, listPrice, row.estimatedCost];
}

/** `Dec 31` of `2026-12-31` (an unreadable day as it is). */
export function shortDay(isoDay: string): string {
  const [year, month, day] = isoDay.split("-").map(Number);
  const names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  return year && month && day && month <= 12 ? `${names[month - 1]} ${day}` : isoDay;
}

/**
 * A forecast's figures (docs/forecast.md): `~$142 by Dec 31 (~$120–$165)`, `~` unless every
 * figure is exact (one `~` before the band, as a range is read); `bold`: the projection in
 * Markdown bold (the tooltip).
 */
export function forecastFigures(
  forecast: { projectedCost: number; low: number; high: number; basis: string; cycleEnd: string },
  bold = false,
): string {
  const mark = forecast.basis === "exact" ? "" : "~";
  const projected = `${mark}${formatMoney(forecast.projectedCost)}`;
  return (
    `${bold ? `**${projected}**` : projected} by ${shortDay(forecast.cycleEnd)} ` +
    `(${mark}${formatMoney(forecast.low)}–${formatMoney(forecast.high)})`
  );
}

/** Other tools than Cursor's: exact tokens at API list prices; their figures make it "AI spend". */
export const LIST_PRICE_TOOLS: ReadonlySet<string> = new Set(["claude-code", "codex"]);
