/**
 * The "Show Spend Breakdown" page: daily bars split exact/estimated over the period picked (this
 * month, last month, last 30 days, this billing cycle with its cumulative spend and forecast), tables by model, by project and of the top conversations, from
 * the server's report. Pure (HTML text); no remote resources, and a Content-Security-Policy that
 * allows only the page's own nonce-tagged style and script.
 */

import {
  costParts,
  escapeHtml as h,
  forecastFigures,
  LIST_PRICE_TOOLS,
  formatCount,
  formatFigure,
  formatMoney,
  formatTokens,
  localEstimateNote,
  plural,
  SPLIT_LABELS,
  splitMoney,
  splitText,
} from "./format";
import type { ConversationRow, ForecastBlock, ReportPayload, Totals } from "./types";

/** The periods the page offers (server period names, docs/report-json.md#periods). */
export const BREAKDOWN_PERIODS = [
  { period: "month", title: "This month" },
  { period: "lastmonth", title: "Last month" },
  { period: "30days", title: "Last 30 days" },
  { period: "cycle", title: "This billing cycle" },
] as const;
export type BreakdownPeriod = (typeof BREAKDOWN_PERIODS)[number]["period"];

export function isBreakdownPeriod(value: unknown): value is BreakdownPeriod {
  return BREAKDOWN_PERIODS.some((p) => p.period === value);
}

export interface BreakdownOptions {
  nonce: string;
  /** Shown above the chart when the data is not fully available (status message). */
  notice?: string;
  /** The period the picker shows as chosen (default: the report's own label, else `month`). */
  period?: BreakdownPeriod;
  /** The billing cycle's end, forecast and limits (from the status), for the cycle view. */
  cycle?: CycleView;
}

/** What the cycle view draws beside the report's days (docs/forecast.md). */
export interface CycleView {
  /** The cycle's last local day, YYYY-MM-DD. */
  end: string;
  forecast: ForecastBlock | null;
  /** The plan's included usage in USD, where the quota says it. */
  includedUsd: number | null;
  /** The on-demand limit in USD (drawn above the included usage when both are known). */
  onDemandLimitUsd: number | null;
}

/** The cycle view's inputs from a status object's `cycle`, `forecast` and `quota`. */
export function cycleView(status: {
  cycle?: { end: string } | null;
  forecast?: ForecastBlock | null;
  quota?: unknown;
}): CycleView | undefined {
  if (!status.cycle) {
    return undefined;
  }
  const quota = status.quota as
    | { available?: boolean; plan?: { limitCents?: unknown } | null; onDemand?: { limitCents?: unknown } | null }
    | null
    | undefined;
  const usd = (cents: unknown) => (typeof cents === "number" && Number.isFinite(cents) && cents > 0 ? cents / 100 : null);
  const readable = quota?.available === true;
  return {
    end: status.cycle.end,
    forecast: status.forecast ?? null,
    includedUsd: readable ? usd(quota?.plan?.limitCents) : null,
    onDemandLimitUsd: readable ? usd(quota?.onDemand?.limitCents) : null,
  };
}

/** Every local day from `from` to `to` inclusive, as `YYYY-MM-DD`. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const [y, m, d] = from.split("-").map(Number);
  const cursor = new Date(Date.UTC(y, m - 1, d));
  for (let i = 0; i < 400; i++) {
    const day = cursor.toISOString().slice(0, 10);
    if (day > to) {
      break;
    }
    days.push(day);
    cursor.setUTCDate(cursor.getUTCDate() + 1);
  }
  return days;
}

/** The last day of the month `day` is in. */
export function monthEnd(day: string): string {
  const [y, m] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
}

/**
 * The days the chart spans: the whole period asked for. "This month" runs to the month's last day
 * (days still to come stay empty), so the 1st of a month is one bar among 28–31, not a chart of one.
 */
export function chartDays(report: ReportPayload): string[] {
  const { label, from, to } = report.period;
  return daysBetween(from, label === "month" ? monthEnd(from) : to);
}

/**
 * The chart's two series for each kind of theme (the class VS Code puts on the webview's body),
 * each at least 3:1 against the editor backgrounds of that kind (WCAG's non-text contrast;
 * test/breakdownHtml.test.ts computes the ratios). Not the theme's `charts.orange`: VS Code
 * derives it from the find-match highlight, a translucent #EA5C0055 that gives about 1.5:1 on the
 * dark theme. A high-contrast light body carries both high-contrast classes; its rule comes last.
 */
export const SERIES_COLOURS = {
  "vscode-dark": { exact: "#3794FF", estimated: "#D18616" },
  "vscode-light": { exact: "#005FB8", estimated: "#B35C00" },
  "vscode-high-contrast": { exact: "#75BEFF", estimated: "#FFA94D" },
  "vscode-high-contrast-light": { exact: "#0F4A85", estimated: "#8A4600" },
} as const;

/** The series colours as CSS variables: the dark theme's by default, then one rule per kind. */
function seriesStyle(): string {
  const vars = (c: { exact: string; estimated: string }) =>
    `--series-exact: ${c.exact}; --series-estimated: ${c.estimated};`;
  return [
    `body { ${vars(SERIES_COLOURS["vscode-dark"])} }`,
    ...Object.entries(SERIES_COLOURS).map(([kind, colours]) => `body.${kind} { ${vars(colours)} }`),
  ].join("\n");
}

// Fixed sizes in CSS pixels: the SVG is drawn 1:1 (never scaled to the panel), so a bar is BAR
// pixels wide and the text FONT pixels high whatever the number of days.
export const BAR = 14;
const GAP = 6;
const SLOT = BAR + GAP;
const CHART_HEIGHT = 160;
const TOP = 18;
const BOTTOM = 20;
const FONT = 10;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** An SVG coordinate: two decimals, never `-0.00` from rounding noise. */
function coord(value: number): string {
  return Math.max(0, value).toFixed(2);
}

function dayLabel(day: string, index: number, count: number): string | undefined {
  const date = Number(day.slice(8));
  if (date === 1) {
    return `${MONTHS[Number(day.slice(5, 7)) - 1]} 1`;
  }
  if (index < count - 1 && monthEnd(day) === day) {
    return undefined; // the next slot names the new month; two labels would run together
  }
  return index === 0 || index === count - 1 || date % 5 === 0 ? String(date) : undefined;
}

function labelText(text: string, x: number, anchor: "start" | "middle"): string {
  return `<text x="${x}" y="${CHART_HEIGHT + 14}" text-anchor="${anchor}">${h(text)}</text>`;
}

function chart(report: ReportPayload): string {
  const byDay = new Map(report.days.map((d) => [d.date, d]));
  const days = chartDays(report);
  const max = Math.max(0, ...report.days.map((d) => d.cost));
  const scale = max > 0 ? CHART_HEIGHT / max : 0;
  const width = days.length * SLOT;
  const bars = days.map((day, i) => {
    const row = byDay.get(day);
    const cost = row?.cost ?? 0;
    const estimated = Math.min(cost, row?.estimatedCost ?? 0);
    const exactHeight = (cost - estimated) * scale;
    const estimatedHeight = estimated * scale;
    const x = i * SLOT;
    const later = day > report.period.to;
    const title = later
      ? `${day}: still to come`
      : `${day}: ${formatFigure(cost, estimated)}` +
        (estimated > 0 ? ` (${formatFigure(estimated, estimated)} estimated)` : "") +
        ` · ${plural(row?.calls ?? 0, "call")}`;
    const label = dayLabel(day, i, days.length);
    return [
      `<g class="day${later ? " later" : ""}" data-date="${day}"><title>${h(title)}</title>`,
      `<rect class="hit" x="${x}" y="0" width="${SLOT}" height="${CHART_HEIGHT}"></rect>`,
      `<rect class="exact" x="${x}" y="${coord(CHART_HEIGHT - exactHeight)}" width="${BAR}" height="${coord(exactHeight)}"></rect>`,
      `<rect class="estimated" x="${x}" y="${coord(CHART_HEIGHT - exactHeight - estimatedHeight)}" width="${BAR}" height="${coord(estimatedHeight)}"></rect>`,
      label ? labelText(label, i === 0 ? x : x + BAR / 2, i === 0 ? "start" : "middle") : "",
      "</g>",
    ].join("");
  });
  const svgWidth = width + 8;
  const svgHeight = TOP + CHART_HEIGHT + BOTTOM;
  return [
    `<div class="chart-scroll">`,
    `<svg class="chart" role="img" aria-label="Daily cost" width="${svgWidth}" height="${svgHeight}" viewBox="-4 -${TOP} ${svgWidth} ${svgHeight}">`,
    `<text class="axis" x="0" y="-6">${h(max > 0 ? `max ${formatMoney(max)} a day` : "no spend in this period")}</text>`,
    `<line class="base" x1="0" y1="${CHART_HEIGHT}" x2="${width}" y2="${CHART_HEIGHT}"></line>`,
    ...bars,
    "</svg>",
    "</div>",
    `<p class="legend"><span class="swatch exact"></span> exact (billed or imported) ` +
      `<span class="swatch estimated"></span> estimated</p>`,
  ].join("\n");
}

/**
 * The cycle view: cumulative spend by day, the projection to the cycle's end with its band, and the
 * included-usage and on-demand lines where known. Drawn 1:1 like the daily chart.
 */
export function cycleChart(report: ReportPayload, view: CycleView): string {
  const days = daysBetween(report.period.from, view.end > report.period.to ? view.end : report.period.to);
  const byDay = new Map(report.days.map((d) => [d.date, d.cost]));
  let total = 0;
  const cumulative: Array<[number, number]> = [];
  days.forEach((day, i) => {
    if (day <= report.period.to) {
      total += byDay.get(day) ?? 0;
      cumulative.push([i, total]);
    }
  });
  const forecast = view.forecast;
  const included = view.includedUsd;
  const onDemandTop = included !== null && view.onDemandLimitUsd !== null ? included + view.onDemandLimitUsd : null;
  const top = Math.max(total, forecast?.high ?? 0, forecast?.projectedCost ?? 0, included ?? 0, onDemandTop ?? 0);
  const scale = top > 0 ? CHART_HEIGHT / top : 0;
  const width = Math.max(days.length - 1, 1) * SLOT;
  const x = (i: number) => coord(i * SLOT);
  const y = (usd: number) => coord(CHART_HEIGHT - usd * scale);
  const parts: string[] = [];
  const last = cumulative.length - 1;
  if (forecast && last >= 0) {
    const end = days.length - 1;
    parts.push(
      `<polygon class="band" points="${x(last)},${y(total)} ${x(end)},${y(forecast.high)} ${x(end)},${y(forecast.low)}"><title>${h(
        `band ${formatMoney(forecast.low)}–${formatMoney(forecast.high)}`,
      )}</title></polygon>`,
      `<line class="projection" x1="${x(last)}" y1="${y(total)}" x2="${x(end)}" y2="${y(forecast.projectedCost)}"><title>${h(
        `projected ${formatMoney(forecast.projectedCost)} by ${view.end}`,
      )}</title></line>`,
    );
  }
  for (const [cls, usd, text] of [
    ["included", included, "included usage"],
    ["ondemand", onDemandTop, "on-demand limit"],
  ] as const) {
    if (usd !== null) {
      parts.push(
        `<line class="${cls}" x1="0" y1="${y(usd)}" x2="${width}" y2="${y(usd)}"></line>`,
        `<text class="axis" x="${width}" y="${coord(CHART_HEIGHT - usd * scale - 3)}" text-anchor="end">${h(`${text} ${formatMoney(usd)}`)}</text>`,
      );
    }
  }
  if (cumulative.length > 0) {
    const points = cumulative.map(([i, usd]) => `${x(i)},${y(usd)}`).join(" ");
    parts.push(`<polyline class="spent" points="${points}"></polyline>`);
  }
  const labels = days
    .map((day, i) => {
      const label = dayLabel(day, i, days.length);
      return label ? labelText(label, i * SLOT, i === 0 ? "start" : "middle") : "";
    })
    .join("");
  const svgWidth = width + 8;
  const svgHeight = TOP + CHART_HEIGHT + BOTTOM;
  const summary = forecast
    ? `At this pace: ${forecastFigures(forecast)}`
    : "Forecast from the 3rd day with usage";
  return [
    `<p class="forecast">${h(summary)}</p>`,
    `<div class="chart-scroll">`,
    `<svg class="chart cycle" role="img" aria-label="Cumulative cost this cycle" width="${svgWidth}" height="${svgHeight}" viewBox="-4 -${TOP} ${svgWidth} ${svgHeight}">`,
    `<text class="axis" x="0" y="-6">${h(`spent ${formatMoney(total)}`)}</text>`,
    `<line class="base" x1="0" y1="${CHART_HEIGHT}" x2="${width}" y2="${CHART_HEIGHT}"></line>`,
    ...parts,
    labels,
    "</svg>",
    "</div>",
    `<p class="legend"><span class="swatch exact"></span> spent <span class="swatch projection"></span> projection and band</p>`,
  ].join("\n");
}

function picker(chosen: BreakdownPeriod): string {
  const options = BREAKDOWN_PERIODS.map(
    (p) => `<option value="${p.period}"${p.period === chosen ? " selected" : ""}>${h(p.title)}</option>`,
  ).join("");
  return `<label class="picker">Period <select id="period">${options}</select></label>`;
}

function money(row: Totals): string {
  return formatFigure(row.cost, row.estimatedCost);
}

/** The estimated part of a row, with the same `~` as every estimated figure. */
function estimatedCell(row: Totals): string {
  return row.estimatedCost > 0 ? formatFigure(row.estimatedCost, row.estimatedCost) : "—";
}

/**
 * The cost cards: the total, then its three parts (billed by Cursor, exact tokens at list price,
 * estimated) at the total's decimals, so that the cards add up to the total as shown.
 */
export function costCards(t: Totals): string {
  const parts = costParts(t);
  const texts = splitMoney(t.cost, parts);
  const whole = splitText(t.cost, ...parts);
  const note = whole.startsWith("all ") ? `<small class="dim">${h(whole)}</small>` : "";
  const labels = ["Billed by Cursor", "Exact tokens at list price", "Estimated"];
  const cards = labels.map(
    (label, i) => `<div class="part" data-part="${SPLIT_LABELS[i]}">${h(label)}<b>${h(texts[i])}</b></div>`,
  );
  return [`<div class="cost">Cost<b>${h(money(t))}</b>${note}</div>`, ...cards].join("\n");
}

/** `textColumns`: how many leading columns are text (the rest are right-aligned figures). */
function table(headers: string[], rows: string[][], empty: string, textColumns = 1): string {
  if (rows.length === 0) {
    return `<p class="empty">${h(empty)}</p>`;
  }
  // A figure's header sits over its figures: right-aligned like them.
  const head = headers.map((x, i) => `<th${i >= textColumns ? ' class="num"' : ""}>${h(x)}</th>`).join("");
  const body = rows
    .map((r) => `<tr>${r.map((cell, i) => `<td${i >= textColumns ? ' class="num"' : ""}>${cell}</td>`).join("")}</tr>`)
    .join("\n");
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function modelsTable(report: ReportPayload): string {
  const providerNames = new Map(report.providers.map((p) => [p.id, p.name]));
  const rows = report.models.map((m) => [
    // The display name, as in every table (the CLI's, the tooltip's); the id is in the JSON.
    `<span title="${h(m.model)}">${h(m.name)}</span>`,
    h(providerNames.get(m.provider) ?? m.provider),
    formatCount(m.calls),
    formatTokens(m.inputTokens),
    formatTokens(m.outputTokens),
    formatTokens(m.cacheReadTokens + m.cacheWriteTokens),
    money(m),
    estimatedCell(m),
  ]);
  return table(
    ["Model", "Provider", "Calls", "Input", "Output", "Cache", "Cost", "Estimated"],
    rows,
    "No model usage in this period.",
    2,
  );
}

/** The project's name; its folder (or, when unknown, its id) as the hover text. */
function projectCell(p: ReportPayload["projects"][number]): string {
  return `<span title="${h(p.path ?? p.project)}">${h(p.name)}</span>`;
}

/** A project row's split by tool ("Cursor ~$2.50 · Claude Code $6.00"). */
function toolsCell(p: ReportPayload["projects"][number]): string {
  return (p.providers ?? []).map((t) => `${h(t.name)} ${h(formatFigure(t.cost, t.estimatedCost))}`).join(" · ");
}

function projectsTable(report: ReportPayload): string {
  // One row per folder across tools; the split by tool when more than one tool is in the period.
  const split = report.providers.length > 1;
  const rows = report.projects.map((p) => [
    projectCell(p),
    ...(split ? [toolsCell(p)] : []),
    formatCount(p.calls),
    formatCount(p.sessions),
    formatTokens(p.inputTokens + p.outputTokens + p.cacheReadTokens + p.cacheWriteTokens),
    money(p),
    estimatedCell(p),
  ]);
  return table(
    ["Project", ...(split ? ["Tools"] : []), "Calls", "Sessions", "Tokens", "Cost", "Estimated"],
    rows,
    "No project usage in this period.",
    split ? 2 : 1,
  );
}

/** How many conversations the page lists (the report carries up to 50). */
export const TOP_CONVERSATIONS = 10;

/** The conversation's title (else the start of its id); the whole id as the hover text. */
function conversationCell(c: ConversationRow): string {
  const title = c.title?.trim() ? c.title : c.id.slice(0, 8);
  return `<span title="${h(c.id)}">${h(title)}</span>`;
}

/** The top conversations by cost; nothing at all when the report has none (or is from an older server). */
function conversationsTable(report: ReportPayload): string {
  const conversations = report.conversations ?? [];
  if (conversations.length === 0) {
    return "";
  }
  const projects = new Map(report.projects.map((p) => [p.project, p]));
  const rows = conversations.slice(0, TOP_CONVERSATIONS).map((c) => {
    const project = projects.get(c.project);
    // The project's row names it; a key without a row (not expected) is shown as it is.
    const where = project ? projectCell(project) : `<span title="${h(c.project)}">${h(c.project)}</span>`;
    return [conversationCell(c), where, money(c), formatCount(c.calls)];
  });
  return `<h2>Top conversations</h2>\n${table(["Title", "Project", "Cost", "Calls"], rows, "", 2)}`;
}

function notes(report: ReportPayload): string {
  const items: string[] = [];
  for (const range of report.coverage.ranges) {
    const how = range.source === "sync" ? "Synced from cursor.com" : "Imported from a CSV export";
    items.push(`${how}: ${h(range.start.slice(0, 10))} to ${h(range.end.slice(0, 10))}`);
  }
  if (report.coverage.localEstimateCost > 0) {
    items.push(`${h(localEstimateNote(report.coverage.localEstimateCost))}.`);
  }
  for (const u of report.unpricedModels) {
    items.push(`Unpriced model ${h(u.model)}: ${plural(u.calls, "call")}, ${formatTokens(u.tokens)} tokens counted at $0.`);
  }
  for (const warning of report.warnings) {
    items.push(h(warning));
  }
  return items.length === 0 ? "" : `<ul class="notes">${items.map((i) => `<li>${i}</li>`).join("")}</ul>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 16px 24px; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; }
h2 { font-size: 1.1em; margin-top: 1.6em; }
.dim, .empty, .legend, .period { color: var(--vscode-descriptionForeground); }
.totals { display: flex; gap: 24px; flex-wrap: wrap; margin: 12px 0; }
.totals div { min-width: 90px; }
.totals b { display: block; font-size: 1.3em; }
.totals small { display: block; }
.chart-scroll { overflow-x: auto; }
.chart { display: block; }
${seriesStyle()}
.chart .exact { fill: var(--series-exact); }
.chart .estimated { fill: var(--series-estimated); }
.chart .hit { fill: transparent; }
.chart .day:hover .hit { fill: var(--vscode-list-hoverBackground, rgba(128,128,128,0.15)); }
.chart text { fill: var(--vscode-descriptionForeground); font-size: ${FONT}px; }
.chart .later .hit { fill: var(--vscode-editorWidget-background, rgba(128,128,128,0.06)); }
.chart .base { stroke: var(--vscode-panel-border, #8884); }
.swatch { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
.swatch.exact { background: var(--series-exact); }
.swatch.estimated { background: var(--series-estimated); }
.swatch.projection { background: var(--vscode-charts-purple, #b180d7); }
.chart .spent { fill: none; stroke: var(--series-exact); stroke-width: 2; }
.chart .projection { stroke: var(--vscode-charts-purple, #b180d7); stroke-width: 2; stroke-dasharray: 4 3; }
.chart .band { fill: var(--vscode-charts-purple, #b180d7); fill-opacity: 0.2; }
.chart .included { stroke: var(--vscode-charts-green, #89d185); stroke-dasharray: 2 2; }
.chart .ondemand { stroke: var(--vscode-charts-red, #f14c4c); stroke-dasharray: 2 2; }
table { border-collapse: collapse; min-width: 60%; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--vscode-panel-border, #8884); text-align: left; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
.notice { padding: 8px 12px; border-left: 3px solid var(--vscode-editorWarning-foreground); }
.picker { margin-left: 12px; }
select { color: var(--vscode-dropdown-foreground); background: var(--vscode-dropdown-background);
  border: 1px solid var(--vscode-dropdown-border, transparent); padding: 2px 4px; }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background);
  border: none; padding: 4px 12px; cursor: pointer; }
`;

const SCRIPT = `
const vscode = acquireVsCodeApi();
document.getElementById("refresh").addEventListener("click", () => vscode.postMessage({ type: "refresh" }));
document.getElementById("period")?.addEventListener("change", (event) =>
  vscode.postMessage({ type: "period", period: event.target.value }));
`;

/** The whole page. */
export function renderBreakdown(report: ReportPayload, options: BreakdownOptions): string {
  const { nonce } = options;
  const t = report.totals;
  const chosen = options.period ?? (isBreakdownPeriod(report.period.label) ? report.period.label : "month");
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    "img-src data:",
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>CodeBurn: spend breakdown</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<h1>${spendHeading(report)}</h1>
<p class="period">${h(report.period.from)} to ${h(report.period.to)} (${h(report.period.timezone)}) ${picker(chosen)} <button id="refresh">Refresh</button></p>
${options.notice ? `<p class="notice">${h(options.notice)}</p>` : ""}
<div class="totals">
${costCards(t)}
<div>Calls<b>${formatCount(t.calls)}</b></div>
<div>Sessions<b>${formatCount(t.sessions)}</b></div>
</div>
${chosen === "cycle" && options.cycle ? `<h2>This billing cycle</h2>\n${cycleChart(report, options.cycle)}` : ""}
<h2>Daily cost</h2>
${chart(report)}
<h2>By model</h2>
${modelsTable(report)}
<h2>By project</h2>
${projectsTable(report)}
${conversationsTable(report)}
${notes(report)}
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>`;
}

/** "AI spend" when the report counts another tool than Cursor's (as the tooltip says). */
export function spendHeading(report: ReportPayload): string {
  return report.providers.some((p) => LIST_PRICE_TOOLS.has(p.id)) ? "AI spend" : "Cursor spend";
}

/** A page for when the report could not be produced. */
export function renderBreakdownError(message: string, nonce: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'">
<style nonce="${nonce}">${STYLE}</style><title>CodeBurn: spend breakdown</title></head>
<body><h1>Cursor spend</h1><p class="notice">${h(message)}</p>
<p><button id="refresh">Try again</button></p>
<script nonce="${nonce}">${SCRIPT}</script></body></html>`;
}
