/**
 * Reads the status object's `quota` (SPEC §7) defensively: its exact shape belongs to the server,
 * so several plausible spellings are accepted, and anything unreadable becomes "unavailable"
 * rather than a made-up 0 %. No `vscode` here.
 */

export interface QuotaPool {
  name: string;
  percent: number;
}

export interface QuotaView {
  available: boolean;
  /** Why it is unavailable, when the server said. */
  reason?: string;
  pools: QuotaPool[];
  /** Percentage of the pool that binds first (the highest). */
  bindingPercent?: number;
  onDemand?: { enabled: boolean; usedUsd: number; limitUsd: number | null };
  membershipType?: string;
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function poolFromEntry(entry: unknown): QuotaPool | undefined {
  if (!isObj(entry)) {
    return undefined;
  }
  const name = str(entry.name) ?? str(entry.label) ?? str(entry.id);
  let percent =
    num(entry.percentUsed) ?? num(entry.percent) ?? num(entry.usedPercent) ?? num(entry.pct);
  const used = num(entry.used);
  const limit = num(entry.limit);
  if (percent === undefined && used !== undefined && limit !== undefined && limit > 0) {
    percent = (used / limit) * 100;
  }
  return name !== undefined && percent !== undefined ? { name, percent } : undefined;
}

function poolsFromPlan(plan: Obj): QuotaPool[] {
  const pools: QuotaPool[] = [];
  const auto = num(plan.autoPercentUsed);
  const api = num(plan.apiPercentUsed);
  if (auto !== undefined) {
    pools.push({ name: "Cursor models", percent: auto });
  }
  if (api !== undefined) {
    pools.push({ name: "Other models", percent: api });
  }
  const total = num(plan.totalPercentUsed);
  if (pools.length === 0 && total !== undefined) {
    pools.push({ name: "Plan", percent: total });
  }
  return pools;
}

function readPools(quota: Obj): QuotaPool[] {
  if (Array.isArray(quota.pools)) {
    return quota.pools.map(poolFromEntry).filter((p): p is QuotaPool => p !== undefined);
  }
  const usage = isObj(quota.individualUsage) ? quota.individualUsage : quota;
  const plan = isObj(usage.plan) ? usage.plan : usage;
  return poolsFromPlan(plan);
}

/** Dollars from a `*Usd` field, else cents from `*Cents` or the API's plain `used`/`limit`. */
function dollars(source: Obj, field: "used" | "limit"): number | undefined {
  const usd = num(source[`${field}Usd`]);
  if (usd !== undefined) {
    return usd;
  }
  const cents = num(source[`${field}Cents`]) ?? num(source[field]);
  return cents === undefined ? undefined : cents / 100;
}

function readOnDemand(quota: Obj): QuotaView["onDemand"] {
  const usage = isObj(quota.individualUsage) ? quota.individualUsage : quota;
  const raw = usage.onDemand;
  if (!isObj(raw)) {
    return undefined;
  }
  const usedUsd = dollars(raw, "used");
  if (usedUsd === undefined) {
    return undefined;
  }
  const limit = dollars(raw, "limit");
  return {
    enabled: raw.enabled !== false,
    usedUsd,
    limitUsd: limit !== undefined && limit > 0 ? limit : null,
  };
}

/** Normalises the quota summary; `null` when there is none (not signed in, never read). */
export function readQuota(quota: unknown): QuotaView | null {
  if (quota === null || quota === undefined) {
    return null;
  }
  if (!isObj(quota)) {
    return { available: false, pools: [] };
  }
  const reason = str(quota.message) ?? str(quota.error);
  const state = str(quota.state) ?? str(quota.status);
  if (quota.available === false || (state !== undefined && state !== "ok")) {
    return { available: false, reason, pools: [] };
  }
  const pools = readPools(quota);
  const onDemand = readOnDemand(quota);
  if (pools.length === 0 && onDemand === undefined) {
    return { available: false, reason, pools: [] };
  }
  const explicit = num(quota.bindingPercent);
  const bindingPercent =
    explicit ?? (pools.length > 0 ? Math.max(...pools.map((p) => p.percent)) : undefined);
  const membershipType = str(quota.membershipType);
  return { available: true, pools, bindingPercent, onDemand, membershipType };
}
