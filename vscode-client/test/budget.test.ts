import assert from "node:assert/strict";
import { test } from "node:test";

import { type BudgetMemory, budgetLevel, checkBudgets } from "../src/budget";

test("levels: 80 % warns, 100 % is over, 0 is off", () => {
  assert.equal(budgetLevel(3.99, 5), "ok");
  assert.equal(budgetLevel(4, 5), "warning");
  assert.equal(budgetLevel(5, 5), "over");
  assert.equal(budgetLevel(500, 0), "ok");
  assert.equal(budgetLevel(500, null), "ok");
});

test("one notification per crossing per period", () => {
  const day1 = new Date(2026, 10, 30, 10);
  const budgets = { daily: 5, monthly: 100 };
  let memory: BudgetMemory = {};
  const step = (today: number, month: number, now = day1) => {
    const result = checkBudgets({ today, month }, budgets, memory, now);
    memory = result.memory;
    return result.notices.map((n) => `${n.kind}:${n.level}`);
  };
  assert.deepEqual(step(1, 10), []);
  assert.deepEqual(step(4.2, 10), ["daily:warning"]);
  assert.deepEqual(step(4.3, 10), []);
  assert.deepEqual(step(5.1, 85), ["daily:over", "monthly:warning"]);
  assert.deepEqual(step(5.2, 86), []);
  // A dip (an import replacing estimates) and a new rise in the same period: no repeat.
  assert.deepEqual(step(1, 10), []);
  assert.deepEqual(step(6, 86), []);
  // Next day: the daily budget is armed again; the month is the same month.
  const day2 = new Date(2026, 11, 1, 9);
  assert.deepEqual(step(4.5, 90, day2), ["daily:warning", "monthly:warning"]);
  assert.equal(memory.daily?.period, "2026-12-01");
  assert.equal(memory.monthly?.period, "2026-12");
});

test("a jump straight over the budget is one notification, with the amounts", () => {
  const { notices } = checkBudgets({ today: 7, month: 7 }, { daily: 5, monthly: 0 }, {}, new Date());
  assert.equal(notices.length, 1);
  assert.equal(notices[0].level, "over");
  assert.match(notices[0].message, /\$7\.00.*over your daily budget of \$5\.00/);
});
