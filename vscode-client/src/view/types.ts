/** Wire shapes from docs/import.md and docs/report-json.md (what the language server sends). No `vscode` here. */

import type { PROTOCOL } from "../protocol";

export type DataState = "ok" | "no-data" | "db-locked" | "db-unrecognized" | "error";
export type BudgetLevel = "ok" | "warning" | "over";
export type SyncState = "ok" | "syncing-never" | "error" | "off" | "no-login";

export interface PeriodFigures {
  cost: number;
  estimatedCost: number;
  /** The parts of `cost` (docs/report-json.md): billed + list price + estimated = cost; absent from older servers. */
  billedCost?: number;
  listPriceCost?: number;
  calls: number;
  /**
   * The part of `cost` in no folder's project ("Cursor (imported)", other machines and cloud
   * agents, "(no project)"), and its estimated part; absent from older servers.
   */
  noProjectCost?: number;
  noProjectEstimatedCost?: number;
  /** Per tool (Cursor, Claude Code, Codex…), cost descending; absent from older servers. */
  providers?: ProviderFigures[];
}

export interface ProviderFigures {
  id: string;
  name: string;
  cost: number;
  estimatedCost: number;
  calls: number;
}

export interface TopModel {
  name: string;
  cost: number;
  calls: number;
  /** Absent from older servers. */
  estimatedCost?: number;
}

export interface CursorSyncBlock {
  enabled: boolean;
  state: SyncState;
  lastSuccessAt: string | null;
  /** The newest synced event (the exact figures reach it); absent from older servers. */
  exactThrough?: string | null;
  /** The last sync read fewer events than cursor.com counted (and merged them). */
  incomplete?: { served: number; count: number };
  errorCode?: "login" | "network" | "export";
  error?: string;
}

/** The billing cycle (docs/forecast.md): local days, where they come from, and its figures. */
export interface CycleBlock extends PeriodFigures {
  start: string;
  end: string;
  source: "cursor" | "calendar";
}

export interface ForecastPool {
  id: string;
  label: string;
  percentUsed: number;
  projectedPercent: number;
  /** YYYY-MM-DD, or null when the pool lasts the cycle at this pace. */
  runsOutOn: string | null;
}

/** The cycle's projected cost with its band (docs/forecast.md); money in USD. */
export interface ForecastBlock {
  /** The cycle's last local day, YYYY-MM-DD. */
  cycleEnd: string;
  projectedCost: number;
  low: number;
  high: number;
  basis: "exact" | "mixed" | "estimated";
  pools: ForecastPool[];
  projectedOnDemand: number | null;
  onDemandLimit: number | null;
}

export interface AlertItem {
  /** Stable per condition and period. */
  id: string;
  level: "info" | "warning" | "error";
  message: string;
}

export interface UnreadableBlock {
  count: number;
  /** reason (e.g. "encrypted") → conversations */
  reasons: Record<string, number>;
}

export interface StatusPayload {
  schema: typeof PROTOCOL.statusSchema;
  generatedAt: string;
  state: DataState;
  message: string | null;
  today: PeriodFigures;
  month: PeriodFigures;
  localEstimateNote: string | null;
  topModels: TopModel[];
  /**
   * This month's costliest project (`name` is what is shown; `estimatedCost` absent from older
   * servers); null without usage, absent from older servers.
   */
  topProject?: { project: string; name: string; path: string | null; cost: number; estimatedCost?: number } | null;
  budget: { daily: number | null; monthly: number | null; level: BudgetLevel };
  /** docs/quota.md's summary; its shape is read defensively (see quota.ts). */
  quota: unknown;
  cursorSync: CursorSyncBlock | null;
  /** Warnings of the local read (unreadable conversations, the scan budget…); absent from older servers. */
  warnings?: string[];
  /** Facts of the local read that are not warnings (skipped rows…): the log, never the tooltip. */
  diagnostics?: string[];
  /** Conversations that exist but could not be read (a newer Cursor format); absent from older servers. */
  unreadable?: UnreadableBlock;
  /** The billing cycle; absent from older servers. */
  cycle?: CycleBlock | null;
  /** Null until the cycle has 3 local days with calls; absent from older servers. */
  forecast?: ForecastBlock | null;
  /** The alert conditions that hold now; absent from older servers. */
  alerts?: AlertItem[];
  /** Beyond the documented shape, optional: whether CODEBURN_CURSOR_SYNC=0 is set for the server. */
  env?: { cursorSyncDisabledByEnv?: boolean };
}

export interface Totals {
  cost: number;
  estimatedCost: number;
  billedCost: number;
  /** Report totals only: the part in no folder's project, and its estimated part (absent from older servers). */
  noProjectCost?: number;
  noProjectEstimatedCost?: number;
  /** Exact tokens priced at list rates: billedCost + listPriceCost + estimatedCost = cost (absent from older servers). */
  listPriceCost?: number;
  calls: number;
  sessions: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ConversationRow extends Totals {
  id: string;
  title: string | null;
  project: string;
  provider: string;
  models: string[];
  /** ISO times of its first and last call in the period. */
  first: string;
  last: string;
}

export interface ReportPayload {
  schema: typeof PROTOCOL.reportSchema;
  period: { label: string; from: string; to: string; timezone: string };
  totals: Totals;
  providers: Array<Totals & { id: string; name: string }>;
  models: Array<Totals & { model: string; name: string; provider: string }>;
  /** `project`: the stable id (a path slug); `name`: what a person reads; `path`: the folder, or null when unknown. */
  /** `providers`: the row split by tool (Cursor, Claude Code, Codex…); absent from older servers. */
  projects: Array<Totals & { project: string; name: string; path: string | null; providers?: ProviderFigures[] }>;
  days: Array<Totals & { date: string }>;
  /**
   * The period's conversations, top 50 by cost (`project`: the key of a `projects` row; `title`
   * null when the conversation has no name); absent from older servers.
   */
  conversations?: ConversationRow[];
  unpricedModels: Array<{ model: string; calls: number; tokens: number }>;
  coverage: {
    ranges: Array<{ start: string; end: string; source: "import" | "sync" }>;
    localEstimateCost: number;
  };
  cursorSync: CursorSyncBlock | null;
  warnings: string[];
  /** Facts of the local read that are not warnings; not shown on the page. */
  diagnostics?: string[];
}

export interface ImportSummary {
  changed: boolean;
  added: number;
  skipped: number;
  total: number;
  coverage: { start: string; end: string; inferred: boolean } | null;
  tokens: number;
  replaced: string[];
  /** Rows dated after tomorrow, refused. */
  future?: number;
  /** Rows billed by the user's own API key: stored, not Cursor spend. */
  userApiKey?: number;
  /** Present for a sync. */
  window?: { start: string; end: string };
  empty?: boolean;
}

export interface RemoveSummary {
  removed: boolean;
  ranges: unknown[];
}
