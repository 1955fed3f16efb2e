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
