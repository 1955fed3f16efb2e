/**
 * Budget crossings: one notification per crossing (80 %, then 100 %) per period, remembered across
 * restarts through a small serialisable record. No `vscode` here.
 */

import { formatMoney, localDay } from "./format";
import type { BudgetLevel } from "./types";

export type BudgetKind = "daily" | "monthly";

/** What has been announced, per kind: the period it was in and the highest level announced. */
export type BudgetMemory = Partial<Record<BudgetKind, { period: string; level: BudgetLevel }>>;

export interface BudgetNotice {
  kind: BudgetKind;
  level: "warning" | "over";
  message: string;
}

const RANK: Record<BudgetLevel, number> = { ok: 0, warning: 1, over: 2 };

/** Level of one spend against one budget (warning at 80 %, over at 100 %; 0 or unset = off). */
export function budgetLevel(spent: number, budget: number | null | undefined): BudgetLevel {
  if (!budget || budget <= 0) {
    return "ok";
  }
  if (spent >= budget) {
    return "over";
  }
  return spent >= budget * 0.8 ? "warning" : "ok";
}

export function periodKey(kind: BudgetKind, now: Date): string {
  return kind === "daily" ? localDay(now) : localDay(now).slice(0, 7);
}

function noticeText(kind: BudgetKind, level: "warning" | "over", spent: number, budget: number) {
  const what = kind === "daily" ? "Today's" : "This month's";
  const which = kind === "daily" ? "daily" : "monthly";
  const percent = Math.floor((spent / budget) * 100);
  return level === "over"
    ? `CodeBurn: ${what} Cursor spend (${formatMoney(spent)}) is over your ${which} budget of ${formatMoney(budget)}.`
    : `CodeBurn: ${what} Cursor spend (${formatMoney(spent)}) reached ${percent} % of your ${which} budget of ${formatMoney(budget)}.`;
}

/**
 * Compares current spend with the budgets and returns the notices to show plus the updated memory.
 * A level announced earlier in the same period is not announced again, even after the spend dips
 * below it for a while (an import replacing estimates, a budget edited back and forth).
 */
export function checkBudgets(
  spend: { today: number; month: number },
  budgets: { daily: number | null | undefined; monthly: number | null | undefined },
  memory: BudgetMemory,
  now: Date,
): { notices: BudgetNotice[]; memory: BudgetMemory } {
  const notices: BudgetNotice[] = [];
  const next: BudgetMemory = { ...memory };
  const checks: Array<[BudgetKind, number, number | null | undefined]> = [
    ["daily", spend.today, budgets.daily],
    ["monthly", spend.month, budgets.monthly],
  ];
  for (const [kind, spent, budget] of checks) {
    const period = periodKey(kind, now);
    const level = budgetLevel(spent, budget);
    const before = memory[kind];
    const announced: BudgetLevel = before?.period === period ? before.level : "ok";
    if (RANK[level] > RANK[announced] && level !== "ok" && budget) {
      notices.push({ kind, level, message: noticeText(kind, level, spent, budget) });
    }
    if (RANK[level] > RANK[announced] || before?.period !== period) {
      next[kind] = { period, level: RANK[level] > RANK[announced] ? level : announced };
    }
  }
  return { notices, memory: next };
}
