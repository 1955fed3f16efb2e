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
  forecastFigures,
  LIST_PRICE_TOOLS,
  shortDay,
} from "./format";
import { readQuota } from "./quota";
import type { CursorSyncBlock, StatusPayload } from "./types";

export type ShowSetting = "today" | "month" | "both";
/** `codeburn.statusBar.period`: what the second figure counts. */
export type PeriodSetting = "month" | "cycle";
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
  /** The second figure's period (default `month`). */
  period?: PeriodSetting;
  /** A sync, import or refresh the user started is running. */
  busy: boolean;
  now: Date;
  /** The editor setting `codeburn.cursorSync.enabled`. */
  syncSetting: boolean;
  /** The editor's locale (`vscode.env.language`) for times and dates; the runtime's if absent. */
  locale?: string;
  /** A time zone for times and dates (tests); the local one if absent. */
  timeZone?: string;
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

/** The setting that points CodeBurn at a Cursor database elsewhere (docs/editor.md). */
export const DATABASE_SETTING = "codeburn.cursor.databasePath";
/** Opens the Settings UI at one setting: `codeburn.openSettings` takes the setting's id. */
const DATABASE_SETTING_LINK = `command:codeburn.openSettings?${encodeURIComponent(JSON.stringify([DATABASE_SETTING]))}`;

const ICON = "$(flame)";
const SPIN = "$(sync~spin)";

function warningText(text: string): string {
  return (
    `$(warning) <span style="color:var(--vscode-editorWarning-foreground);">` +
    `${escapeMarkdown(text)}</span>`
  );
}

/**
 * "exact to 14:05, estimated after": how far the synced (exact) figures reach, in the editor's
 * locale and the local time zone, with the date when it is not today; `undefined` without one.
 */
export function exactThroughText(
  sync: CursorSyncBlock | null,
  now: Date,
  locale?: string,
  timeZone?: string,
): string | undefined {
  const iso = sync?.exactThrough;
  const when = iso ? new Date(iso) : undefined;
  if (when === undefined || Number.isNaN(when.getTime())) {
    return undefined;
  }
  const time = when.toLocaleTimeString(locale, { hour: "2-digit", minute: "2-digit", timeZone });
  const day = (d: Date) => d.toLocaleDateString("en-CA", { timeZone });
  const date =
    day(when) === day(now)
      ? ""
      : `${when.toLocaleDateString(locale, { day: "numeric", month: "short", timeZone })} `;
  return `exact to ${date}${time}, estimated after`;
}

/** The sync line (docs/report-json.md#cursorsync-block), or `undefined` when there is none (sync off or never signed in). */
export function syncLine(
  sync: CursorSyncBlock | null,
  now: Date,
  locale?: string,
  timeZone?: string,
): string | undefined {
  if (sync === null) {
    return undefined;
  }
  switch (sync.state) {
    case "ok": {
      const synced = sync.lastSuccessAt
        ? `Synced from cursor.com ${formatRelative(sync.lastSuccessAt, now)}`
        : "Synced from cursor.com";
      const exact = exactThroughText(sync, now, locale, timeZone);
      return exact ? `${synced} · ${exact}` : synced;
    }
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

/** The second figure: the billing cycle's when that is the setting and the server sends one. */
function secondFigure(status: StatusPayload, period: PeriodSetting): [string, StatusPayload["month"]] {
  return period === "cycle" && status.cycle ? ["cycle", status.cycle] : ["month", status.month];
}

/**
 * The tooltip's forecast line (docs/forecast.md): `At this pace: ~$142 by Dec 31 (~$120–$165)`, `~` unless
 * every figure is exact (one `~` before the band, as a range is read); before there is one, from
 * when there will be.
 */
export function forecastLine(status: StatusPayload): string | undefined {
  const forecast = status.forecast;
  if (forecast === undefined || (forecast === null && !status.cycle)) {
    return undefined; // an older server: nothing to say
  }
  if (forecast === null) {
    return "At this pace: forecast from the 3rd day with usage";
  }
  return `At this pace: ${forecastFigures(forecast, true)}`;
}

function figuresText(status: StatusPayload, show: ShowSetting, period: PeriodSetting): string {
  const today = `${formatFigure(status.today.cost, status.today.estimatedCost)} today`;
  const [label, figures] = secondFigure(status, period);
  const month = `${formatFigure(figures.cost, figures.estimatedCost)} ${label}`;
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

function budgetLine(status: StatusPayload, period: PeriodSetting): string | undefined {
  const { daily, monthly, level } = status.budget;
  const [label, figures] = secondFigure(status, period);
  const parts: string[] = [];
  if (daily) {
    parts.push(`${formatFigure(status.today.cost, status.today.estimatedCost)} of ${formatMoney(daily)} today`);
  }
  if (monthly) {
    parts.push(`${formatFigure(figures.cost, figures.estimatedCost)} of ${formatMoney(monthly)} this ${label}`);
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

/**
 * What was looked for and how to point CodeBurn at a database, in the normal colour: the server's
 * message names the path it looked at (docs/report-json.md, `no-data`).
 */
export function noDataLines(status: StatusPayload): string[] {
  const looked = status.message ?? "No Cursor data found";
  return [
    escapeMarkdown(looked),
    "",
    "That is where CodeBurn looks for Cursor's database (`state.vscdb`). If Cursor keeps it " +
      "elsewhere, set " +
      `[\`${DATABASE_SETTING}\`](${DATABASE_SETTING_LINK}) to that \`state.vscdb\`; ` +
      "or import a usage CSV from cursor.com.",
    "",
  ];
}

/**
 * `Top project this month: web-app — ~$0.210 · $13.38 not tied to a project`: the spend in no
 * folder's project (imported, other machines and cloud agents, no project) is said beside the top
 * project whenever it is more than the top project's, so that the top project is never read as
 * most of the month; `~` on whichever figure is estimated.
 */
export function topProjectLine(status: StatusPayload): string | undefined {
  const top = status.topProject ?? null;
  const rest = status.month.noProjectCost ?? 0;
  const restText = `${formatFigure(rest, status.month.noProjectEstimatedCost ?? 0)} not tied to a project`;
  if (top === null) {
    return rest > 0 ? `Top project this month: none — ${restText}` : undefined;
  }
  const head = `Top project this month: ${escapeMarkdown(top.name)} — ${formatFigure(top.cost, top.estimatedCost ?? 0)}`;
  return rest > top.cost ? `${head} · ${restText}` : head;
}

/**
 * Data states without figures. No Cursor data is a normal state (no Cursor on this machine, or
 * another database path), not a fault: the normal colour, and the tooltip says where CodeBurn
 * looked and how to point it elsewhere.
 */
const UNAVAILABLE: Record<string, { label: string; background: Background }> = {
  "no-data": { label: "no Cursor data", background: undefined },
  "db-unrecognized": { label: "Cursor data not recognized", background: "error" },
  error: { label: "can't read Cursor data", background: "error" },
};

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
  // "AI spend" when the figures count another tool than Cursor's, as the budget messages say.
  const others = (status.month.providers ?? []).some((t) => LIST_PRICE_TOOLS.has(t.id));
  const lines: string[] = [`**CodeBurn** — ${others ? "AI spend" : "Cursor AI spend"}`, ""];
  if (status.state === "db-locked") {
    lines.push(warningText(status.message ?? "Cursor database busy, retrying"), "");
  }
  if (status.state === "no-data") {
    lines.push(...noDataLines(status));
  } else if (status.state in UNAVAILABLE) {
    lines.push(warningText(status.message ?? UNAVAILABLE[status.state].label), "");
  }
  // No data means zeros that mean nothing: the message above says what is missing instead.
  if (status.state !== "no-data") {
    lines.push(periodLine("Today", status.today), "", periodLine("This month", status.month), "");
    if (status.cycle && status.cycle.source === "cursor") {
      const span = `${shortDay(status.cycle.start)} – ${shortDay(status.cycle.end)}`;
      lines.push(periodLine(`This cycle (${span})`, status.cycle), "");
    }
    const forecast = forecastLine(status);
    if (forecast !== undefined) {
      lines.push(forecast, "");
    }
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
  const project = topProjectLine(status);
  if (project) {
    lines.push(project, "");
  }
  const extra = [
    unreadableLine(status),
    syncLine(status.cursorSync, input.now, input.locale, input.timeZone),
    ...quotaLines(status, input.now),
    budgetLine(status, input.period ?? "month"),
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
    text: `${icon} ${figuresText(status, input.show, input.period ?? "month")}${locked ? " $(warning)" : ""}`,
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
