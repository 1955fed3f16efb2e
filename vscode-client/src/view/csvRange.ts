/**
 * The import command's range prompt: the local days a Cursor usage export spans (to prefill the
 * prompt), and parsing what the user typed. No `vscode` here.
 */

import { localDay } from "./format";

/** Splits CSV text into rows of cells (quotes, doubled quotes, CRLF, a BOM). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (quoted) {
      if (ch === '"' && body[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') {
        quoted = false;
      } else {
        cell += ch;
      }
    } else if (ch === '"') {
      quoted = true;
    } else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && body[i + 1] === "\n") {
        i++;
      }
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else {
      cell += ch;
    }
  }
  if (cell !== "" || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows.filter((r) => r.length > 1 || r[0] !== "");
}

export interface DayRange {
  from: string;
  to: string;
}

/** The local days of the first and last event of an export, or `null` when none can be read. */
export function inferCsvRange(text: string): DayRange | null {
  const rows = parseCsv(text);
  if (rows.length < 2) {
    return null;
  }
  const dateColumn = rows[0].findIndex((name) => name.trim().toLowerCase() === "date");
  if (dateColumn < 0) {
    return null;
  }
  let first = Infinity;
  let last = -Infinity;
  for (const row of rows.slice(1)) {
    const time = Date.parse((row[dateColumn] ?? "").trim());
    if (!Number.isNaN(time)) {
      first = Math.min(first, time);
      last = Math.max(last, time);
    }
  }
  if (!Number.isFinite(first)) {
    return null;
  }
  return { from: localDay(new Date(first)), to: localDay(new Date(last)) };
}

export function formatRange(range: DayRange): string {
  return `${range.from} to ${range.to}`;
}

const BOUND = /^(\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?|\d{10,16})$/;

/**
 * Reads `FROM to TO` (also `FROM..TO`); each side a date, an ISO time or epoch milliseconds.
 * An empty answer means "no range" (the server infers it).
 */
export function parseRangeInput(input: string): { from?: string; to?: string } | { error: string } {
  const text = input.trim();
  if (text === "") {
    return {};
  }
  const parts = text.split(/\s+to\s+|\s*\.\.\s*|\s+–\s+/);
  if (parts.length !== 2) {
    return { error: "Write the range as FROM to TO, for example 2026-11-01 to 2026-11-30." };
  }
  const [from, to] = parts.map((p) => p.trim());
  for (const bound of [from, to]) {
    if (!BOUND.test(bound)) {
      return {
        error: `"${bound}" is not a date (YYYY-MM-DD), an ISO time or epoch milliseconds.`,
      };
    }
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(from) && /^\d{4}-\d{2}-\d{2}$/.test(to) && from > to) {
    return { error: `The range starts (${from}) after it ends (${to}).` };
  }
  return { from, to };
}
