import type { HubQuota, QuotaOverride } from "../config/resources/hub_rules.ts";
import { attributeText, type AttributeMap } from "../wire/compressed.ts";
import type { HubConfig } from "./hub_config.ts";
import { lookup, ruleApplies } from "./match.ts";
import type { ReferencedAttributes } from "./referenced.ts";

/** What a requested quota means for one request. */
export type QuotaPlan =
  /** Not limited for this request: grant what was asked (upstream: a quota that does not apply is unlimited). */
  | { readonly kind: "unlimited"; readonly reason: "no HubQuota" | "no rule applies" }
  | { readonly kind: "limited"; readonly quota: HubQuota; readonly counterKey: string; readonly maxAmount: number; readonly override?: number };

function overrideHolds(o: QuotaOverride, attributes: AttributeMap, referenced: ReferencedAttributes): boolean {
  return o.dimensions.every(([ref, value]) => {
    const v = lookup(attributes, ref, referenced);
    return v !== undefined && attributeText(v) === value;
  });
}

/**
 * Decides how the quota `name` a request asks for is charged:
 * - no HubQuota has that spec.name → unlimited;
 * - some HubRule has a `quota: {name}` action → charged only when one of those rules applies, else unlimited;
 * - no rule names it → charged for every request that asks for it;
 * - charged requests use the first override whose dimensions all equal the request's
 *   attributes (its own counter and maxAmount), else the quota's shared counter.
 * Attributes looked at are recorded in `referenced`.
 */
export function planQuota(config: HubConfig, name: string, attributes: AttributeMap, referenced: ReferencedAttributes): QuotaPlan {
  const quota = config.quotas.get(name);
  if (quota === undefined) return { kind: "unlimited", reason: "no HubQuota" };
  const rules = config.quotaRules.get(name);
  if (rules !== undefined && !rules.some((r) => ruleApplies(config, r, attributes, referenced))) {
    return { kind: "unlimited", reason: "no rule applies" };
  }
  const i = quota.overrides.findIndex((o) => overrideHolds(o, attributes, referenced));
  if (i >= 0) return { kind: "limited", quota, counterKey: overrideKey(name, quota.overrides[i]), maxAmount: quota.overrides[i].maxAmount, override: i };
  return { kind: "limited", quota, counterKey: name, maxAmount: quota.maxAmount };
}

/**
 * The counter of an override, as upstream's redisquota names it: the quota
 * name, `-`, and the decimal FNV-32a hash of the override's dimensions as
 * sorted `name\tvalue\n` lines. It depends on the dimensions only, so
 * reordering overrides (or replicas with a newer copy) keeps the counters.
 */
export function overrideKey(quotaName: string, override: QuotaOverride): string {
  const lines = override.dimensions.map(([ref, value]) => `${ref.text}\t${value}\n`).sort();
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(lines.join(""), "utf8")) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return `${quotaName}-${hash}`;
}
