import type { Resource } from "../config/catalog.ts";
import type { ClientTlsSettings, Subset, TrafficPolicy } from "../config/resources/networking.ts";
import { hostSpecificity, serviceNamespace } from "./hosts.ts";

/**
 * Which DestinationRule and subset apply to a call, as upstream looks them
 * up: the client's namespace first, then the service's namespace, then the
 * root namespace (each only for rules exported to the client); within one
 * namespace the most specific host wins, then the first given.
 */

type DestinationRule = Resource<"DestinationRule">;

/** Whether a rule's `exportTo` makes it visible in the client namespace (`.`: its own namespace; empty: everywhere). */
export function visibleFrom(r: Pick<DestinationRule, "namespace" | "spec">, clientNamespace: string): boolean {
  const to = r.spec.exportTo;
  if (to.length === 0 || to.includes("*") || to.includes(clientNamespace)) return true;
  return to.includes(".") && r.namespace === clientNamespace;
}

/** The namespaces looked at, in order. */
export function lookupNamespaces(host: string, clientNamespace: string, rootNamespace: string): string[] {
  const out: string[] = [];
  for (const ns of [clientNamespace, serviceNamespace(host), rootNamespace]) if (ns !== undefined && !out.includes(ns)) out.push(ns);
  return out;
}

export function findDestinationRule(
  rules: readonly DestinationRule[],
  host: string,
  clientNamespace: string,
  rootNamespace: string,
): DestinationRule | undefined {
  for (const ns of lookupNamespaces(host, clientNamespace, rootNamespace)) {
    let best: DestinationRule | undefined;
    let bestScore = -1;
    for (const r of rules) {
      if (r.namespace !== ns || !visibleFrom(r, clientNamespace)) continue;
      const score = hostSpecificity(r.spec.fqdn, host);
      if (score > bestScore) {
        best = r;
        bestScore = score;
      }
    }
    if (best) return best;
  }
  return undefined;
}

/**
 * The rule a service's clients use when the client's namespace is not
 * known (the analyzer reads files): as seen from the service's own
 * namespace, else from the first other namespace (by name) that sees one.
 */
export function destinationRuleForAnyClient(
  rules: readonly DestinationRule[],
  host: string,
  serviceNamespace: string,
  rootNamespace: string,
): DestinationRule | undefined {
  const others = [...new Set(rules.map((r) => r.namespace))].filter((ns) => ns !== serviceNamespace).sort();
  for (const ns of [serviceNamespace, ...others]) {
    const rule = findDestinationRule(rules, host, ns, rootNamespace);
    if (rule) return rule;
  }
  return undefined;
}

/**
 * The TLS settings a traffic policy gives a service port: its
 * `portLevelSettings` entry for the port replaces the destination-level
 * policy (security.md §2.2), so an entry without `tls` means none.
 * `portLevelIndex` is that entry's index, -1 when the host level decided.
 */
export function tlsForPort(policy: TrafficPolicy | undefined, servicePort: number): { tls?: ClientTlsSettings; portLevelIndex: number } {
  const i = policy?.portLevelSettings.findIndex((p) => p.port === servicePort) ?? -1;
  return i >= 0 ? { tls: policy!.portLevelSettings[i].tls, portLevelIndex: i } : { tls: policy?.tls, portLevelIndex: -1 };
}

export interface AppliedDestination {
  readonly rule?: DestinationRule;
  /** The subset named by the route, when the rule defines it. */
  readonly subset?: Subset;
  /** Set when a route names a subset the rule does not define (upstream: the route gets no healthy upstream, 503). */
  readonly missingSubset?: string;
  /** The traffic policy in force for the port: subset's over rule's, port-level over host-level. */
  readonly trafficPolicy?: TrafficPolicy;
}

/**
 * The rule, subset and traffic policy for a destination host, service port
 * and optional subset name, seen from a client namespace.
 */
export function destinationFor(
  rules: readonly DestinationRule[],
  host: string,
  servicePort: number,
  subsetName: string | undefined,
  clientNamespace: string,
  rootNamespace: string,
): AppliedDestination {
  const rule = findDestinationRule(rules, host, clientNamespace, rootNamespace);
  if (subsetName === undefined) return { rule, trafficPolicy: rule?.spec.trafficPolicy };
  const subset = rule?.spec.subsets.find((s) => s.name === subsetName);
  if (!subset) return { rule, missingSubset: subsetName, trafficPolicy: rule?.spec.trafficPolicy };
  return { rule, subset, trafficPolicy: mergePolicy(rule?.spec.trafficPolicy, subset.trafficPolicy, servicePort) };
}

/**
 * A subset's policy over the rule's for one service port, as upstream
 * merges them: the rule's port-level entry for the port first replaces its
 * `tls`, then the subset's fields replace the result's, and the subset's own
 * port-level entry for the port replaces its `tls` last (an entry without
 * `tls` means none). The result has no port-level entries left.
 */
function mergePolicy(base: TrafficPolicy | undefined, over: TrafficPolicy | undefined, port: number): TrafficPolicy | undefined {
  if (!over) return base;
  const entry = over.portLevelSettings.find((p) => p.port === port);
  return Object.freeze({
    tls: entry ? entry.tls : (over.tls ?? tlsForPort(base, port).tls),
    portLevelSettings: Object.freeze([]),
    connectionPool: over.connectionPool ?? base?.connectionPool,
    outlierDetection: over.outlierDetection ?? base?.outlierDetection,
  });
}
