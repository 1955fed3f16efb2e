/**
 * Reads the status object's `quota` (docs/quota.md) defensively: anything that
 * cannot be read becomes "quota unavailable", never a made-up 0 %. Also accepts the raw
 * cursor.com `usage-summary` shape. No `vscode` here.
 */

export interface QuotaPool {
  name: string;
  percent: number;
}

export interface QuotaView {
  available: boolean;
  /** Why it is unavailable, in words, when known. */
  reason?: string;
  pools: QuotaPool[];
  /** The pool that binds first (the server's `binding`, else the highest). */
  binding?: QuotaPool;
  onDemand?: { enabled: boolean; usedUsd: number; limitUsd: number | null };
  membershipType?: string;
  billingCycleEnd?: string;
  /** When the figures are from an earlier fetch (the last one failed): when they were fetched. */
  staleSince?: string;
}

type Obj = Record<string, unknown>;

const REASONS: Record<string, string> = {
  login: "Cursor login expired",
  network: "couldn't reach cursor.com",
  format: "cursor.com answered in an unknown format",
};

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
  const name = str(entry.label) ?? str(entry.name) ?? str(entry.id);
  let percent = num(entry.percentUsed) ?? num(entry.percent);
  const used = num(entry.usedCents) ?? num(entry.used);
  const limit = num(entry.limitCents) ?? num(entry.limit);
  if (percent === undefined && used !== undefined && limit !== undefined && limit > 0) {
    percent = (used / limit) * 100;
  }
  return name !== undefined && percent !== undefined ? { name, percent } : undefined;
}

/** The raw API: individualUsage.plan.autoPercentUsed / apiPercentUsed. */
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
  return isObj(usage.plan) ? poolsFromPlan(usage.plan) : [];
}

/** Dollars from a `*Usd` field, else cents from `*Cents` or the API's plain `used`/`limit`. */
function dollars(source: Obj, field: "used" | "limit"): number | null | undefined {
  const usd = num(source[`${field}Usd`]);
  if (usd !== undefined) {
    return usd;
  }
  const raw = source[`${field}Cents`] ?? source[field];
  if (raw === null) {
    return null;
  }
  const cents = num(raw);
  return cents === undefined ? undefined : cents / 100;
}

function readOnDemand(quota: Obj): QuotaView["onDemand"] {
  const usage = isObj(quota.individualUsage) ? quota.individualUsage : quota;
  const raw = usage.onDemand;
  if (!isObj(raw)) {
    return undefined;
  }
  const usedUsd = dollars(raw, "used");
  if (usedUsd === undefined || usedUsd === null) {
    return undefined;
  }
  const limit = dollars(raw, "limit");
  return {
    enabled: raw.enabled !== false,
    usedUsd,
    limitUsd: limit !== undefined && limit !== null && limit > 0 ? limit : null,
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
  const reasonCode = str(quota.reason);
  const reason = (reasonCode && REASONS[reasonCode]) ?? reasonCode;
  const state = str(quota.state);
  if (quota.available === false || (state !== undefined && state !== "ok")) {
    return { available: false, reason, pools: [] };
  }
  const pools = readPools(quota);
  const onDemand = readOnDemand(quota);
  if (pools.length === 0) {
    return { available: false, reason: reason ?? REASONS.format, pools: [] };
  }
  const binding =
    poolFromEntry(quota.binding) ??
    pools.reduce((top, pool) => (pool.percent > top.percent ? pool : top));
  return {
    available: true,
    pools,
    binding,
    onDemand,
    membershipType: str(quota.membershipType),
    billingCycleEnd: str(quota.billingCycleEnd),
    staleSince: quota.stale === true ? str(quota.fetchedAt) : undefined,
  };
}
