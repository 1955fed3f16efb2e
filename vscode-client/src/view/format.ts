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
  return `${sign}$${grouped(Number(cents) < 100 ? cents : abs.toFixed(0))}`;
}

/** A money figure with `~` in front when any part of it is estimated. */
export function formatFigure(cost: number, estimatedCost: number): string {
  return `${estimatedCost > 0 ? "~" : ""}${formatMoney(cost)}`;
}

/** Whole numbers with thousands separators. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

const TOKEN_UNITS: ReadonlyArray<readonly [number, string]> = [
  [1_000, "K"],
  [1_000_000, "M"],
  [1_000_000_000, "B"],
];

/** `count / divisor` rounded half up, for non-negative integers. */
function halfUpDiv(count: number, divisor: number): number {
  return Math.floor((2 * count + divisor) / (2 * divisor));
}

/**
 * Token counts in three significant figures at most, as the Python side writes them:
 * `950`, `1.2K`, `14.8K`, `123K`, `3.2M`, `1.5B` (999.5K and up read `1.0M`).
 */
export function formatTokens(value: number): string {
  if (!Number.isFinite(value)) {
    return "?";
  }
  const sign = value < 0 ? "-" : "";
  let count = Math.round(Math.abs(value));
  if (count < 1000) {
    return `${sign}${count}`;
  }
  for (let n = 0; n < TOKEN_UNITS.length; n++) {
    const [unit, suffix] = TOKEN_UNITS[n];
    const last = n === TOKEN_UNITS.length - 1;
    if (!last && count >= TOKEN_UNITS[n + 1][0]) {
      continue;
    }
    const tenths = halfUpDiv(count * 10, unit);
    if (tenths < 1000) {
      return `${sign}${Math.floor(tenths / 10)}.${tenths % 10}${suffix}`;
    }
    const whole = halfUpDiv(count, unit);
    if (whole < 1000 || last) {
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
