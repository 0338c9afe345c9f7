import { type CatalogChecks, decodeDocuments } from "../../../config/catalog.ts";
import { DEFAULT_DOMAIN, serviceFqdn } from "../../../mesh/hosts.ts";
import { Field } from "../../../config/decode.ts";
import type { SourceDocument } from "../../../config/documents.ts";
import { ConfigError } from "../../../config/errors.ts";
import { formatConfigProblem } from "../../../config/problems.ts";
import type { Scenario, TokenKey, WorkloadSpec } from "./scenario.ts";
import { TOKEN_KEYS } from "./scenario.ts";
import { PLACEHOLDER, type TokenKeys } from "./tokens.ts";

/**
 * A scenario's `resources[]` turned into the configuration its sidecars
 * read: `${JWKS:key-N}` replaced by that key's JSON Web Key Set, a Service
 * document for every workload `service` (unless the scenario defines it),
 * every document checked by the catalog — an error names
 * `scenarios[i].resources[j]`, the resource and the field path (exit 2).
 */

/** The mesh's DNS domain in a scenario: its sidecars run with the default (`cluster.local`). */
export const SCENARIO_DOMAIN = DEFAULT_DOMAIN;

/** The FQDN a workload's service answers on (the mesh model's, in the scenario's domain). */
export function workloadServiceFqdn(service: string, namespace: string): string {
  return serviceFqdn(service, namespace, SCENARIO_DOMAIN);
}

/** Replaces `${JWKS:key-1}` in every string of a document; an unknown key is an error at its field path. */
export function substitutePlaceholders(f: Field, keys: TokenKeys): unknown {
  const v = f.value;
  if (typeof v === "string") {
    return v.replace(PLACEHOLDER, (_m, key: string) => {
      if (!(TOKEN_KEYS as readonly string[]).includes(key))
        f.invalid(`unknown placeholder \${JWKS:${key}} (known: ${TOKEN_KEYS.map((k) => `\${JWKS:${k}}`).join(", ")})`);
      return JSON.stringify(keys.jwks(key as TokenKey));
    });
  }
  if (Array.isArray(v)) return f.list().map((item) => substitutePlaceholders(item, keys));
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.keys(v).map((k) => [k, substitutePlaceholders(f.get(k), keys)]));
  return v;
}

/** Service documents for the workloads' `service` fields (ports with a servicePort only). */
export function serviceDocuments(workloads: readonly WorkloadSpec[], defined: ReadonlySet<string>): Record<string, unknown>[] {
  const byService = new Map<
    string,
    { name: string; namespace: string; selector: Record<string, string>; ports: Map<number, { name: string; port: number; targetPort: number }> }
  >();
  for (const w of workloads) {
    if (w.service === undefined || w.kind === "external-client") continue;
    const key = `${w.namespace}/${w.service}`;
    if (defined.has(key)) continue;
    const entry = byService.get(key) ?? { name: w.service, namespace: w.namespace, selector: { ...w.labels }, ports: new Map() };
    byService.set(key, entry);
    for (const p of w.ports) {
      if (p.servicePort === null || entry.ports.has(p.servicePort)) continue;
      entry.ports.set(p.servicePort, { name: p.name, port: p.servicePort, targetPort: p.containerPort });
    }
  }
  return [...byService.values()].map((s) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: s.name, namespace: s.namespace },
    spec: { selector: s.selector, ports: [...s.ports.values()] },
  }));
}

/**
 * The documents to write to the scenario's configuration directory,
 * checked by the catalog; warnings go to `warnings`.
 *
 * @throws ConfigError naming `<file>: scenarios[i].resources[j]: <Kind ns/name>: <field path>: …`
 */
export function scenarioDocuments(scenario: Scenario, keys: TokenKeys, checks: CatalogChecks, file: string, warnings: string[]): Record<string, unknown>[] {
  const bodies: Record<string, unknown>[] = [];
  const docs: SourceDocument[] = [];
  for (const [j, r] of scenario.resources.entries()) {
    const body = substitutePlaceholders(r, keys) as Record<string, unknown>;
    const root = new Field(body, r.path, r.context);
    const apiVersion = root.get("apiVersion").string();
    const kind = root.get("kind").string();
    const name = root.get("metadata").get("name").string();
    const namespace = root.get("metadata").get("namespace").optionalString();
    docs.push({ file: `${file}: ${r.path}`, index: j, apiVersion, kind, name, namespace, body });
    bodies.push(body);
  }
  const catalog = decodeDocuments(docs, checks);
  for (const w of catalog.warnings) warnings.push(`Warning: ${formatConfigProblem(w)}`);
  const error = catalog.errors[0];
  if (error) {
    const e = new ConfigError({}, "", "");
    e.message = formatConfigProblem(error);
    throw e;
  }
  const defined = new Set(catalog.byKind.Service.map((s) => `${s.namespace}/${s.name}`));
  return [...bodies, ...serviceDocuments(scenario.workloads, defined)];
}

/**
 * Points `jwksUri`s at the loopback jwks servers: every string starting with
 * `http://<fqdn>:<port>` of a jwks-server becomes `http://127.0.0.1:<port>`
 * (standing in for cluster DNS, which the sidecars do not have on loopback).
 */
export function mapJwksUris(value: unknown, origins: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") {
    for (const [from, to] of origins) if (value === from || value.startsWith(`${from}/`)) return to + value.slice(from.length);
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => mapJwksUris(v, origins));
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapJwksUris(v, origins)]));
  return value;
}
