import { ConvertError } from "./convert_error.ts";
import type { AccessRule, ServiceRole } from "./rbac.ts";

/**
 * The workload selectors a v1alpha1 rule's service names and
 * `destination.labels[…]` constraints stand for, as upstream's converter
 * derived them: a service is a Service's short name, `prefix*`, `*suffix`
 * (every matching Service of the role's namespace, by name) or `*` (no
 * selector); each label constraint value is one more choice, and choices of
 * different keys combine (a conflicting label is an error).
 */
export type Labels = Readonly<Record<string, string>>;

/** A workload selector and the Service it came from (none for `*` and label-only targets). */
export interface Target {
  readonly labels: Labels;
  readonly service?: string;
}

/** The `destination.labels[k]` constraints of a rule as selectors: each value one choice, keys combined. */
export function labelTargets(role: ServiceRole, rule: AccessRule): Target[] {
  let targets: Target[] = [];
  for (const c of rule.constraints) {
    const m = /^destination\.labels\[(.+)\]$/.exec(c.key);
    if (!m) continue;
    const choices = c.values.map((v) => ({ labels: { [m[1]]: v } }));
    targets = merge(targets, choices, role, c.path);
  }
  return targets;
}

export function serviceTargets(service: string, known: ReadonlyMap<string, Labels> | undefined, byLabels: Target[], role: ServiceRole, path: string): Target[] {
  let fromService: Target[];
  if (service === "*") fromService = [{ labels: {} }];
  else {
    const names = [...(known?.keys() ?? [])].sort();
    const matches = service.startsWith("*")
      ? names.filter((n) => n.endsWith(service.slice(1)))
      : service.endsWith("*")
        ? names.filter((n) => n.startsWith(service.slice(0, -1)))
        : names.filter((n) => n === service.split(".")[0]);
    fromService = matches.map((n) => ({ labels: known!.get(n)!, service: n }));
    if (fromService.length === 0) return [];
  }
  return merge(fromService, byLabels, role, path);
}

function merge(a: Target[], b: Target[], role: ServiceRole, path: string): Target[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return a.flatMap((x) =>
    b.map((y) => {
      for (const [k, v] of Object.entries(y.labels)) {
        if (k in x.labels && x.labels[k] !== v) {
          throw new ConvertError(role.origin, path, `duplicate workload label "${k}" with conflicting values: "${x.labels[k]}", "${v}"`);
        }
      }
      return { labels: { ...x.labels, ...y.labels }, service: x.service ?? y.service };
    }),
  );
}
