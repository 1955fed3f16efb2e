/** The extension's settings, normalised (bad values fall back to defaults). No `vscode` here. */

import type { PeriodSetting, ShowSetting } from "./statusView";

export interface Settings {
  syncEnabled: boolean;
  databasePath: string;
  refreshIntervalSeconds: number;
  show: ShowSetting;
  /** What the second figure counts: the calendar month or the billing cycle. */
  period: PeriodSetting;
  budgetDaily: number;
  budgetMonthly: number;
  interpreter: string;
}

export const DEFAULTS: Settings = {
  syncEnabled: true,
  databasePath: "",
  refreshIntervalSeconds: 30,
  show: "both",
  period: "month",
  budgetDaily: 0,
  budgetMonthly: 0,
  interpreter: "",
};

function nonNegative(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Reads the `codeburn` section through a getter such as `WorkspaceConfiguration.get`. */
export function readSettings(get: (key: string) => unknown): Settings {
  const show = get("statusBar.show");
  const period = get("statusBar.period");
  const interval = get("refreshIntervalSeconds");
  const sync = get("cursorSync.enabled");
  const text = (key: string) => {
    const value = get(key);
    return typeof value === "string" ? value.trim() : "";
  };
  return {
    syncEnabled: typeof sync === "boolean" ? sync : DEFAULTS.syncEnabled,
    databasePath: text("cursor.databasePath"),
    refreshIntervalSeconds:
      typeof interval === "number" && Number.isFinite(interval)
        ? Math.max(10, interval)
        : DEFAULTS.refreshIntervalSeconds,
    show: show === "today" || show === "month" || show === "both" ? show : DEFAULTS.show,
    period: period === "month" || period === "cycle" ? period : DEFAULTS.period,
    budgetDaily: nonNegative(get("budget.daily")),
    budgetMonthly: nonNegative(get("budget.monthly")),
    interpreter: text("python.interpreter"),
  };
}
