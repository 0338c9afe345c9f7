import { InvalidArgumentError } from "commander";
import type { AnalysisMessage } from "./analyzer.ts";

/**
 * `-S/--suppress "<code>=<Kind> <name>.<namespace>"` (upstream's form), or
 * with the resource as messages print it (`<Kind> <namespace>/<name>`);
 * `Namespace foo` for cluster-scoped kinds. `*` matches any run of
 * characters, so `MSH0127=AuthorizationPolicy *.foo` covers a namespace
 * and `MSH0127=*` every resource.
 */
export interface Suppression {
  readonly code: string;
  readonly resource: string;
  /** Whether a resource name fits `resource`, `*` standing for any run of characters. */
  readonly matches: (name: string) => boolean;
}

export function parseSuppression(text: string): Suppression {
  const eq = text.indexOf("=");
  const code = eq < 0 ? "" : text.slice(0, eq).trim();
  const resource = eq < 0 ? "" : text.slice(eq + 1).trim();
  if (!code || !resource) {
    throw new InvalidArgumentError(`${JSON.stringify(text)} is not a valid suppression: expected <code>=<Kind> <name>.<namespace>, e.g. "MSH0101=VirtualService reviews.default"`);
  }
  const parts = resource.split("*");
  return Object.freeze({ code, resource, matches: (name: string) => globMatches(parts, name) });
}

// `*` globs matched without a regex: the first part is a prefix, the last a
// suffix, and the middle parts are found left to right (the leftmost place
// of each leaves the most room for the rest): no input can make it backtrack.
function globMatches(parts: readonly string[], name: string): boolean {
  if (parts.length === 1) return name === parts[0];
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (name.length < first.length + last.length || !name.startsWith(first) || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = name.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** The names a suppression may use for a message's resource. */
export function suppressionNames(m: AnalysisMessage): string[] {
  const t = m.target;
  if (!t.namespace) return [t.id];
  return [`${t.kind} ${t.name}.${t.namespace}`, `${t.kind} ${t.namespace}/${t.name}`];
}

export function isSuppressed(m: AnalysisMessage, suppressions: readonly Suppression[]): boolean {
  return suppressions.some((s) => s.code === m.type.code && suppressionNames(m).some((n) => s.matches(n)));
}
