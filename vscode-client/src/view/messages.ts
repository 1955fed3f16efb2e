/** Text for command results (import, sync, removal). No `vscode` here. */

import { plural } from "./format";
import type { ImportSummary, RemoveSummary } from "./types";

const PROVIDER_NAMES: Record<string, string> = {
  cursor: "Cursor",
  "cursor-agent": "Cursor Agent",
  grokbot: "Grok Bot",
};

function day(iso: string): string {
  return iso.slice(0, 10);
}

function replacedText(replaced: string[]): string {
  if (replaced.length === 0) {
    return "";
  }
  const names = replaced.map((id) => PROVIDER_NAMES[id] ?? id);
  return ` It replaces the local estimates of ${names.join(", ")} for those days.`;
}

export function importMessage(summary: ImportSummary): string {
  const coverage = summary.coverage
    ? ` covering ${day(summary.coverage.start)} to ${day(summary.coverage.end)}` +
      (summary.coverage.inferred ? " (from its first and last rows)" : "")
    : "";
  if (!summary.changed) {
    return (
      `CodeBurn: nothing new — all ${plural(summary.skipped, "row")} of this export were ` +
      `already imported${coverage}. Nothing was uploaded.`
    );
  }
  const skipped = summary.skipped > 0 ? `, ${summary.skipped} already there` : "";
  return (
    `CodeBurn imported ${plural(summary.added, "row")}${skipped} (${summary.total} stored)` +
    `${coverage}.${replacedText(summary.replaced)}${notesText(summary)} Nothing was uploaded.`
  );
}

function notesText(summary: ImportSummary): string {
  let text = "";
  if (summary.userApiKey) {
    text += ` Not counted as Cursor spend: ${plural(summary.userApiKey, "row")} billed to your own API key.`;
  }
  if (summary.future) {
    text += ` Refused: ${plural(summary.future, "row")} dated after tomorrow.`;
  }
  return text;
}

export function syncMessage(summary: ImportSummary): string {
  const since = summary.window ? ` since ${day(summary.window.start)}` : "";
  if (summary.empty) {
    return `CodeBurn: cursor.com has no usage${since} yet.`;
  }
  if (!summary.changed) {
    return `CodeBurn is up to date with cursor.com (${plural(summary.total, "row")} stored).`;
  }
  return `CodeBurn synced ${plural(summary.added, "new row")} from cursor.com${since}.`;
}

export function removeMessage(summary: RemoveSummary): string {
  if (!summary.removed) {
    return "CodeBurn: there was no imported Cursor usage to remove.";
  }
  return (
    `CodeBurn removed the imported Cursor usage (${plural(summary.ranges.length, "range")}); ` +
    "local estimates are back for those days."
  );
}
