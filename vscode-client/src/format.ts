/** Text formatting shared by the status bar, tooltip, messages and the breakdown. No `vscode`. */

/**
 * US dollars with as many decimals as the amount needs: `$123`, `$1,234`, `$1.75`, `$0.050`,
 * `$0.0045`; amounts too small for four decimals read `<$0.0001` (never a misleading `$0.00`).
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
  if (abs < 0.00005) {
    return `${sign}<$0.0001`;
  }
  let text: string;
  if (abs >= 99.995) {
    text = Math.round(abs).toLocaleString("en-US");
  } else if (abs >= 0.9995) {
    text = abs.toFixed(2);
  } else if (abs >= 0.00995) {
    text = abs.toFixed(3);
  } else {
    text = abs.toFixed(4);
  }
  return `${sign}$${text}`;
}

/** A money figure with `~` in front when any part of it is estimated. */
export function formatFigure(cost: number, estimatedCost: number): string {
  return `${estimatedCost > 0 ? "~" : ""}${formatMoney(cost)}`;
}

/** Whole numbers with thousands separators. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** Token counts the way people read them: `950`, `12.3k`, `4.5M`. */
export function formatTokens(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1_000_000) {
    return `${(value / 1_000_000).toFixed(1)}M`;
  }
  if (abs >= 10_000) {
    return `${Math.round(value / 1000)}k`;
  }
  if (abs >= 1000) {
    return `${(value / 1000).toFixed(1)}k`;
  }
  return String(Math.round(value));
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
