/**
 * What the status bar item shows for a given client state: text, tooltip Markdown, background and
 * click action. Pure: the caller turns this into `vscode` objects. No `vscode` here.
 */

import {
  costParts,
  escapeMarkdown,
  formatFigure,
  formatMoney,
  formatPercent,
  formatRelative,
  plural,
  splitText,
} from "./format";
import { readQuota } from "./quota";
import type { CursorSyncBlock, StatusPayload } from "./types";

export type ShowSetting = "today" | "month" | "both";
export type Background = "warning" | "error" | undefined;
export type ClickAction = "breakdown" | "logs" | "python";

/** Where the extension is, from its own point of view (the server's data state is inside). */
export type ClientState =
  | { kind: "starting" }
  | { kind: "python-missing"; message: string }
  | { kind: "server-down"; message: string }
  | { kind: "status"; status: StatusPayload };

export interface ViewInput {
  state: ClientState;
  show: ShowSetting;
  /** A sync, import or refresh the user started is running. */
  busy: boolean;
  now: Date;
  /** The editor setting `codeburn.cursorSync.enabled`. */
  syncSetting: boolean;
}

export interface StatusView {
  text: string;
  tooltip: string;
  background: Background;
  click: ClickAction;
}

/** Commands the tooltip links to: the trusted Markdown allows exactly these. */
export const TOOLTIP_COMMANDS = [
  "codeburn.syncCursor",
  "codeburn.importCursorCsv",
  "codeburn.showBreakdown",
  "codeburn.openSettings",
  "codeburn.showLogs",
  "codeburn.restartServer",
  "codeburn.selectPython",
] as const;

/** Where "How to install" points. */
export const PYTHON_DOWNLOAD_URL = "https://www.python.org/downloads/";

export const SYNC_ERROR_TEXTS: Record<string, string> = {
  login: "Cursor login expired, open Cursor to sign in again",
  network: "Couldn't reach cursor.com, will retry",
  export: "Couldn't read the usage export from cursor.com, will retry",
};

const DATA_LINKS =
  "[Sync now](command:codeburn.syncCursor) · [Import CSV](command:codeburn.importCursorCsv) · " +
  "[Show breakdown](command:codeburn.showBreakdown) · [Settings](command:codeburn.openSettings)";
const TROUBLE_LINKS =
  "[Show Logs](command:codeburn.showLogs) · [Restart Server](command:codeburn.restartServer) · " +
  "[Settings](command:codeburn.openSettings)";

const PYTHON_LINKS =
  "[Pick Python…](command:codeburn.selectPython) · " +
  `[How to install](${PYTHON_DOWNLOAD_URL}) · ${TROUBLE_LINKS}`;

const ICON = "$(flame)";
const SPIN = "$(sync~spin)";

function warningText(text: string): string {
  return (
    `$(warning) <span style="color:var(--vscode-editorWarning-foreground);">` +
    `${escapeMarkdown(text)}</span>`
  );
}

/** The §8.1 sync line, or `undefined` when there is none (sync off or never signed in). */
export function syncLine(sync: CursorSyncBlock | null, now: Date): string | undefined {
  if (sync === null) {
    return undefined;
  }
  switch (sync.state) {
    case "ok":
      return sync.lastSuccessAt
        ? `Synced from cursor.com ${formatRelative(sync.lastSuccessAt, now)}`
        : "Synced from cursor.com";
    case "syncing-never":
      return "Not synced from cursor.com yet";
    case "off":
      return undefined;
    default:
      return warningText(
        sync.error ?? SYNC_ERROR_TEXTS[sync.errorCode ?? "login"] ?? SYNC_ERROR_TEXTS.login,
      );
  }
}

function figuresText(status: StatusPayload, show: ShowSetting): string {
  const today = `${formatFigure(status.today.cost, status.today.estimatedCost)} today`;
  const month = `${formatFigure(status.month.cost, status.month.estimatedCost)} month`;
  const parts = show === "today" ? [today] : show === "month" ? [month] : [today, month];
  const quota = readQuota(status.quota);
  if (quota?.binding) {
    parts.push(`${quota.binding.name} ${formatPercent(quota.binding.percent)}`);
  } else if (quota && !quota.available) {
    parts.push("quota unavailable");
  }
  return parts.join(" · ");
}

/**
 * `This month: **~$8.55** · 120 calls` and what it is made of, as the CLI and the breakdown say it:
 * `($6.76 billed by Cursor + $1.13 exact tokens at list price + ~$0.66 estimated)`, or `(all
 * estimated)` — the parts add up to the total as shown.
 */
export function periodLine(label: string, figures: StatusPayload["today"]): string {
  const parts = splitText(figures.cost, ...costParts(figures));
  const split = parts ? ` (${parts})` : "";
  return `${label}: **${formatFigure(figures.cost, figures.estimatedCost)}**${split} · ${plural(figures.calls, "call")}`;
}

function quotaLines(status: StatusPayload, now: Date): string[] {
  const quota = readQuota(status.quota);
  if (quota === null) {
    return [];
  }
  if (!quota.available) {
    const why = quota.reason ? ` (${escapeMarkdown(quota.reason)})` : "";
    return [`Plan quota: quota unavailable${why}`];
  }
  const parts = quota.pools.map((p) => `${escapeMarkdown(p.name)} ${formatPercent(p.percent)}`);
  if (quota.onDemand) {
    const { usedUsd, limitUsd, enabled } = quota.onDemand;
    const limit = limitUsd === null ? ", no limit" : ` of ${formatMoney(limitUsd)}`;
    parts.push(enabled ? `on-demand ${formatMoney(usedUsd)}${limit}` : "on-demand off");
  }
  const notes: string[] = [];
  if (quota.billingCycleEnd) {
    notes.push(`resets ${escapeMarkdown(quota.billingCycleEnd.slice(0, 10))}`);
  }
  if (quota.staleSince) {
    notes.push(`as of ${formatRelative(quota.staleSince, now)}`);
  }
  const tail = notes.length > 0 ? ` (${notes.join(", ")})` : "";
  return [`Plan quota: ${parts.join(" · ")}${tail}`];
}

function budgetLine(status: StatusPayload): string | undefined {
  const { daily, monthly, level } = status.budget;
  const parts: string[] = [];
  if (daily) {
    parts.push(`${formatFigure(status.today.cost, status.today.estimatedCost)} of ${formatMoney(daily)} today`);
  }
  if (monthly) {
    parts.push(`${formatFigure(status.month.cost, status.month.estimatedCost)} of ${formatMoney(monthly)} this month`);
  }
  if (parts.length === 0) {
    return undefined;
  }
  const text = `Budget: ${parts.join(" · ")}`;
  if (level === "over") {
    return `$(error) ${text} — over budget`;
  }
  return level === "warning" ? `$(warning) ${text} — over 80 %` : text;
}

/** Never a silent $0: conversations that exist locally but could not be read are said. */
export function unreadableLine(status: StatusPayload): string | undefined {
  const count = status.unreadable?.count ?? 0;
  if (!(count > 0)) {
    return undefined;
  }
  return warningText(
    `${plural(count, "conversation")} in a newer Cursor format could not be read — ` +
      "sync or import for exact figures",
  );
}

const UNAVAILABLE: Record<string, { label: string; background: Background }> = {
  "no-data": { label: "no Cursor data", background: "warning" },
  "db-unrecognized": { label: "Cursor data not recognized", background: "error" },
  error: { label: "can't read Cursor data", background: "error" },
};

/** Tools whose own logs are priced at list price, not what their subscription costs. */
const LIST_PRICE_TOOLS = new Set(["claude-code", "codex"]);

/** One line per tool this month, when more than Cursor counts; said once: what the other
 * tools' figures are (exact tokens at API list prices, never a subscription's bill). */
export function toolLines(status: StatusPayload): string[] {
  const tools = status.month.providers ?? [];
  if (!tools.some((t) => LIST_PRICE_TOOLS.has(t.id))) {
    return [];
  }
  const lines = ["By tool this month:", ""];
  for (const tool of tools) {
    lines.push(
      `- ${escapeMarkdown(tool.name)} — ${formatFigure(tool.cost, tool.estimatedCost)} · ${plural(tool.calls, "call")}`,
    );
  }
  lines.push("", "_Claude Code and Codex: exact tokens at API list prices, not what a subscription costs_", "");
  return lines;
}

function dataTooltip(input: ViewInput, status: StatusPayload): string {
  const lines: string[] = ["**CodeBurn** — Cursor AI spend", ""];
  if (status.state === "db-locked") {
    lines.push(warningText(status.message ?? "Cursor database busy, retrying"), "");
  }
  if (status.state in UNAVAILABLE) {
    lines.push(warningText(status.message ?? UNAVAILABLE[status.state].label), "");
  }
  // No data means zeros that mean nothing: the message above says what is missing instead.
  if (status.state !== "no-data") {
    lines.push(periodLine("Today", status.today), "", periodLine("This month", status.month), "");
  }
  lines.push(...toolLines(status));
  if (status.topModels.length > 0) {
    lines.push("Top models this month:", "");
    for (const model of status.topModels.slice(0, 5)) {
      lines.push(
        `- ${escapeMarkdown(model.name)} — ${formatFigure(model.cost, model.estimatedCost ?? 0)} · ${plural(model.calls, "call")}`,
      );
    }
    lines.push("");
  }
  if (status.topProject) {
    lines.push(`Top project this month: ${escapeMarkdown(status.topProject.name)} — ${formatMoney(status.topProject.cost)}`, "");
  }
  const extra = [
    unreadableLine(status),
    syncLine(status.cursorSync, input.now),
    ...quotaLines(status, input.now),
    budgetLine(status),
  ];
  if (status.env?.cursorSyncDisabledByEnv && input.syncSetting) {
    extra.push("Sync from cursor.com is turned off by CODEBURN\\_CURSOR\\_SYNC=0");
  }
  if (status.localEstimateNote) {
    extra.push(`_${escapeMarkdown(status.localEstimateNote)}_`);
  }
  for (const line of extra) {
    if (line !== undefined) {
      lines.push(line, "");
    }
  }
  lines.push("---", "", DATA_LINKS);
  return lines.join("\n");
}

function troubleTooltip(title: string, message: string, links = TROUBLE_LINKS): string {
  return ["**CodeBurn** — " + title, "", escapeMarkdown(message), "", "---", "", links].join("\n");
}

function budgetBackground(status: StatusPayload): Background {
  if (status.budget.level === "over") {
    return "error";
  }
  return status.budget.level === "warning" ? "warning" : undefined;
}

/** The whole status bar view for one moment. */
export function computeView(input: ViewInput): StatusView {
  const { state } = input;
  const icon = input.busy ? SPIN : ICON;
  switch (state.kind) {
    case "starting":
      return {
        text: `${SPIN} CodeBurn`,
        tooltip: troubleTooltip("starting", "Starting CodeBurn's language server…"),
        background: undefined,
        click: "logs",
      };
    case "python-missing":
      return {
        text: `${ICON} CodeBurn: Python needed`,
        tooltip: troubleTooltip("Python needed", state.message, PYTHON_LINKS),
        background: "error",
        click: "python",
      };
    case "server-down":
      return {
        text: `${ICON} CodeBurn: server stopped`,
        tooltip: troubleTooltip("server stopped", state.message),
        background: "error",
        click: "logs",
      };
    case "status":
      break;
  }
  const status = state.status;
  const tooltip = dataTooltip(input, status);
  const unavailable = UNAVAILABLE[status.state];
  if (unavailable !== undefined) {
    return {
      text: `${icon} CodeBurn: ${unavailable.label}`,
      tooltip,
      background: unavailable.background,
      click: "breakdown",
    };
  }
  const locked = status.state === "db-locked";
  return {
    text: `${icon} ${figuresText(status, input.show)}${locked ? " $(warning)" : ""}`,
    tooltip,
    background: locked ? (budgetBackground(status) ?? "warning") : budgetBackground(status),
    click: "breakdown",
  };
}

/** The theme colour id for a background. */
export function backgroundColorId(background: Background): string | undefined {
  if (background === undefined) {
    return undefined;
  }
  return background === "error"
    ? "statusBarItem.errorBackground"
    : "statusBarItem.warningBackground";
}
