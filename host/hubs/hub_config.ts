import type { HubAccessLog, HubMetrics, HubQuota, HubResource, HubRule } from "../config/resources/hub_rules.ts";

/**
 * One immutable snapshot of the hub's configuration. The request path only
 * reads it; a reload builds a new one (or keeps the old one).
 */
export interface HubConfig {
  /** Rules in this namespace apply to every request; others only where destination.namespace equals theirs. */
  readonly defaultNamespace: string;
  /** All rules, by namespace then name. */
  readonly rules: readonly HubRule[];
  /** Rules with a deny or allowList action, in the same order. */
  readonly preconditionRules: readonly HubRule[];
  /** Rules with a `quota: {name}` action, by quota name. */
  readonly quotaRules: ReadonlyMap<string, readonly HubRule[]>;
  /** HubQuotas by spec.name. */
  readonly quotas: ReadonlyMap<string, HubQuota>;
  readonly accessLogs: readonly HubAccessLog[];
  /** HubMetrics documents, by namespace then name: applied in that order over the standard metrics. */
  readonly metrics: readonly HubMetrics[];
}

export interface BuiltConfig {
  config: HubConfig;
  /** Resources left out, e.g. a second HubQuota for the same quota name. */
  problems: string[];
}

function byNamespaceName(a: { namespace: string; name: string }, b: { namespace: string; name: string }): number {
  return a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Builds a snapshot from decoded resources given in file order. A resource
 * whose kind/namespace/name (or, for HubQuota, quota name) was already seen is
 * left out and reported; the first one wins.
 */
export function buildHubConfig(resources: readonly HubResource[], defaultNamespace: string): BuiltConfig {
  const problems: string[] = [];
  const seen = new Map<string, HubResource>();
  const rules: HubRule[] = [];
  const quotas = new Map<string, HubQuota>();
  const accessLogs: HubAccessLog[] = [];
  const metrics: HubMetrics[] = [];
  for (const r of resources) {
    const first = seen.get(r.id);
    if (first) {
      problems.push(`${r.file}: ${r.id}: already defined in ${first.file}; this one is ignored`);
      continue;
    }
    if (r.kind === "HubQuota") {
      const other = quotas.get(r.quotaName);
      if (other) {
        problems.push(
          `${r.file}: ${r.id}: spec.name: quota ${JSON.stringify(r.quotaName)} is already defined by ${other.id} in ${other.file}; this one is ignored`,
        );
        continue;
      }
      quotas.set(r.quotaName, r);
    } else if (r.kind === "HubRule") {
      rules.push(r);
    } else if (r.kind === "HubMetrics") {
      metrics.push(r);
    } else {
      accessLogs.push(r);
    }
    seen.set(r.id, r);
  }
  rules.sort(byNamespaceName);
  accessLogs.sort(byNamespaceName);
  metrics.sort(byNamespaceName);
  const quotaRules = new Map<string, HubRule[]>();
  for (const rule of rules) {
    for (const action of rule.actions) {
      if (action.kind !== "quota") continue;
      const list = quotaRules.get(action.name) ?? [];
      if (!list.includes(rule)) list.push(rule);
      quotaRules.set(action.name, list);
    }
  }
  const config: HubConfig = Object.freeze({
    defaultNamespace,
    rules: Object.freeze(rules),
    preconditionRules: Object.freeze(rules.filter((r) => r.actions.some((a) => a.kind !== "quota"))),
    quotaRules,
    quotas,
    accessLogs: Object.freeze(accessLogs),
    metrics: Object.freeze(metrics),
  });
  return { config, problems };
}

export function emptyHubConfig(defaultNamespace: string): HubConfig {
  return buildHubConfig([], defaultNamespace).config;
}
