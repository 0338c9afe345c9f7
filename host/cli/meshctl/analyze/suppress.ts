import { InvalidArgumentError } from "commander";
import { globPattern } from "../../../regex/glob.ts";
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
    throw new InvalidArgumentError(
      `${JSON.stringify(text)} is not a valid suppression: expected <code>=<Kind> <name>.<namespace>, e.g. "MSH0101=VirtualService reviews.default"`,
    );
  }
  const glob = globPattern(resource);
  return Object.freeze({ code, resource, matches: (name: string) => glob.test(name) });
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
