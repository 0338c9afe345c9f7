// Probes of spec 1 with meshctl: each resource field of its tables set in a
// document of its kind (`meshctl validate`, which refuses unknown fields and
// wrong values naming the field path), with a wrong value beside it to see
// the field checked; the request-handling rules and errors by `meshctl x
// simulate` (real CA, sidecars and echo apps on loopback) with the scenarios
// of test/cli/fixtures/simulate/.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { firstLine, runProgram } from "./run.ts";
import type { SpecDocument, SpecTableRow } from "./spec_rows.ts";

const SIMULATE_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "cli", "fixtures", "simulate");
const DOMAIN = "mesh.io";

type Json = unknown;

export interface FieldProbe {
  readonly row: SpecTableRow;
  readonly kind: string;
  readonly apiVersion: string;
  /** The field's path in the document (`spec.transport.checkCluster`). */
  readonly path: string;
  readonly good: Json;
  readonly bad?: Json;
}

export interface FieldOutcome {
  readonly probe: FieldProbe;
  /** validate's complaints about the document with the field set (none: accepted). */
  readonly goodComplaints: readonly string[];
  /** …and about the one with a wrong value (expected: one naming the field). */
  readonly badComplaints: readonly string[];
}

/** Where each message of spec 1's hub client section sits in a document validate reads. */
const MESSAGE_HOMES: Record<string, { kind: string; prefix: string }> = {
  "**APIKey**": { kind: "HTTPAPISpec", prefix: "spec.apiKeys[]" },
  "**HTTPAPISpec**": { kind: "HTTPAPISpec", prefix: "spec" },
  "**HTTPAPISpecPattern**": { kind: "HTTPAPISpec", prefix: "spec.patterns[]" },
  "**MeshService**": { kind: "HTTPAPISpecBinding", prefix: "spec.services[]" },
  "**HttpClientConfig**": { kind: "HttpClientConfig", prefix: "spec" },
  "**ServiceConfig**": { kind: "HttpClientConfig", prefix: "spec.serviceConfigs{}" },
  "**TcpClientConfig**": { kind: "TcpClientConfig", prefix: "spec" },
  "**TransportConfig**": { kind: "HttpClientConfig", prefix: "spec.transport" },
};

/** A value of a spec type, and a wrong one. */
function sample(type: string, field: string, rules: string): { good: Json; bad: Json } {
  const t = type.replace(/`/g, "");
  const enumValue = /`([A-Z_]+)`/.exec(rules)?.[1];
  if (/^enum/.test(t)) return { good: enumValue ?? "STRICT", bad: "NOT_A_VALUE" };
  if (/^map<string,\s*string>/.test(t)) return { good: { app: "httpbin" }, bad: "app=httpbin" };
  if (/^map<port number/.test(t)) return { good: { 8080: { mode: "DISABLE" } }, bad: ["8080"] };
  if (/^map<string, ServiceConfig>/.test(t)) return { good: { "httpbin.foo.svc.cluster.local": { disableCheckCalls: true } }, bad: ["httpbin"] };
  if (/^string\[\]/.test(t)) return { good: [field === "paths" ? "/admin" : "*"], bad: "*" };
  if (/^string \(URL\)/.test(t)) return { good: "https://example.com/.well-known/jwks.json", bad: 42 };
  if (/^string/.test(t)) {
    if (field === "host" || field === "service" || field === "defaultDestinationService") return { good: "httpbin.foo.svc.cluster.local", bad: 42 };
    if (field === "httpMethod") return { good: "GET", bad: 42 };
    if (field === "uriTemplate") return { good: "/pets/{id}", bad: 42 };
    if (field === "regex") return { good: "^/pets/[0-9]+$", bad: 42 };
    return { good: field === "issuer" ? "testing@secure.example.com" : "hub_server", bad: 42 };
  }
  if (/^bool/.test(t)) return { good: true, bad: "yes" };
  if (/^uint32|^int32/.test(t)) return { good: 10, bad: "ten" };
  if (/^Duration/.test(t)) return { good: "5s", bad: "five seconds" };
  if (/^array/.test(t)) return { good: [{ port: { number: 80 }, tls: { mode: "DISABLE" } }], bad: "80" };
  if (/^Attributes/.test(t)) return { good: { attributes: { "api.service": { stringValue: "petstore" } } }, bad: "api.service" };
  if (/^HTTPAPISpecPattern\[\]/.test(t)) return { good: [{ httpMethod: "GET", uriTemplate: "/pets/{id}" }], bad: "GET /pets" };
  if (/^APIKey\[\]/.test(t)) return { good: [{ query: "key" }], bad: "key" };
  if (/^HTTPAPISpec\[\]/.test(t)) return { good: [{ patterns: [{ httpMethod: "GET", uriTemplate: "/pets" }] }], bad: "petstore" };
  if (/^QuotaSpec\[\]/.test(t)) return { good: [{ rules: [{ quotas: [{ quota: "requestcount", charge: 1 }] }] }], bad: "requestcount" };
  if (/^QuotaSpec/.test(t)) return { good: { rules: [{ quotas: [{ quota: "requestcount", charge: 1 }] }] }, bad: "requestcount" };
  if (/^NetworkFailPolicy/.test(t)) return { good: { policy: "FAIL_CLOSE" }, bad: "FAIL_CLOSE" };
  if (/^TransportConfig/.test(t)) return { good: { disableCheckCache: true }, bad: true };
  return { good: "x", bad: 42 };
}

/** Sets `path` (`a.b[].c`, `a{}.b`: one array item / one map entry) in `doc`. */
function setPath(doc: Record<string, Json>, path: string, value: Json): void {
  const parts = path.split(".");
  let at: Record<string, Json> = doc;
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    const name = part.replace(/\[\]$|\{\}$/, "");
    if (last && !part.endsWith("[]")) {
      at[name] = value;
      return;
    }
    if (part.endsWith("[]")) {
      const existing = Array.isArray(at[name]) ? (at[name] as Json[])[0] : undefined;
      const item = (existing ?? {}) as Record<string, Json>;
      at[name] = last ? [value] : [item];
      at = item;
    } else if (part.endsWith("{}")) {
      const entry: Record<string, Json> = {};
      at[name] = { "httpbin.foo.svc.cluster.local": entry };
      at = entry;
    } else {
      at[name] ??= {};
      at = at[name] as Record<string, Json>;
    }
  });
}

export function fieldProbes(doc: SpecDocument): FieldProbe[] {
  const out: FieldProbe[] = [];
  for (const row of doc.rows) {
    if (row.header[0] !== "Field") continue;
    const kindHeading = /### (\w+) \(apiVersion `([a-z]+)\.<mesh_domain>\/(\w+)`\)/.exec(`### ${row.section.split(" › ")[1] ?? ""}`);
    const bold = row.section.split(" › ")[2];
    let kind: string;
    let apiVersion: string;
    let path: string;
    const field = row.cells[0].replace(/`/g, "").split(" -> ").pop()!.trim();
    if (kindHeading && !bold) {
      kind = kindHeading[1];
      apiVersion = `${kindHeading[2]}.${DOMAIN}/${kindHeading[3]}`;
      path = field;
    } else if (bold && MESSAGE_HOMES[bold]) {
      kind = MESSAGE_HOMES[bold].kind;
      apiVersion = `config.${DOMAIN}/v1alpha2`;
      path = `${MESSAGE_HOMES[bold].prefix}.${field}`;
    } else continue;
    const leaf = field.replace(/\[\]$/, "").split(".").pop()!;
    const { good, bad } = sample(row.cells[1], leaf, row.cells[row.cells.length - 1]);
    // `x[]` is set to one item: the sample of an array type is that item.
    out.push({ row, kind, apiVersion, path, good: path.endsWith("[]") && Array.isArray(good) ? good[0] : good, bad });
  }
  return out;
}

/** Spec 1's Gateway and VirtualService rows, as documents of the fields they list. */
export const GATEWAY_DOCS: Record<string, Record<string, Json>> = {
  Gateway: { selector: { mesh: "ingressgateway" }, servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
  VirtualService: {
    hosts: ["httpbin.example.com"],
    gateways: ["httpbin-gateway"],
    http: [{ route: [{ destination: { host: "httpbin.foo.svc.cluster.local", port: { number: 8000 } } }] }],
  },
};

/** What a document of a kind needs besides the field under probe (so that its complaints are about that field). */
const BASES: Record<string, Record<string, Json>> = {
  PeerAuthentication: { spec: { selector: { matchLabels: { app: "httpbin" } } } },
  DestinationRule: { spec: { host: "httpbin.foo.svc.cluster.local" } },
  RequestAuthentication: { spec: { jwtRules: [{ issuer: "testing@secure.example.com" }] } },
};

/** `spec.a[].b`, `spec.c{}.d` as validate writes them (`spec.a[0].b`, `spec.c[httpbin.foo.svc.cluster.local].d`). */
export const writtenPath = (path: string) => path.replace(/\[\]/g, "[0]").replace(/\{\}/g, "[httpbin.foo.svc.cluster.local]");

function complaintsAbout(output: string, file: string, kind: string, name: string, tmp: string): string[] {
  return output
    .split("\n")
    .filter((l) => l.includes(`${kind} probe/${name}:`))
    .map((l) => firstLine(l.replace(`${file}: `, ""), [tmp]));
}

/** Every field probe (and the two gateway documents, and each kind of the Versioning table) in one `meshctl validate` run. */
export async function probeFields(probes: readonly FieldProbe[], tmp: string, versions: ReadonlyArray<{ kind: string; apiVersion: string }>) {
  const docs: string[] = [];
  const named = (kind: string, apiVersion: string, name: string, spec: Json) =>
    stringify({ apiVersion, kind, metadata: { name, namespace: "probe" }, ...(spec as object) });
  probes.forEach((p, i) => {
    const good: Record<string, Json> = structuredClone(BASES[p.kind] ?? {});
    setPath(good, p.path, p.good);
    docs.push(named(p.kind, p.apiVersion, `good-${i}`, good));
    if (p.bad !== undefined) {
      const bad: Record<string, Json> = {};
      setPath(bad, p.path, p.bad);
      docs.push(named(p.kind, p.apiVersion, `bad-${i}`, bad));
    }
  });
  for (const [kind, spec] of Object.entries(GATEWAY_DOCS)) docs.push(named(kind, `networking.${DOMAIN}/v1alpha3`, `sample-${kind.toLowerCase()}`, { spec }));
  versions.forEach((v, i) => docs.push(named(v.kind, v.apiVersion, `version-${i}`, { spec: {} })));
  const file = join(tmp, "fields.yaml");
  writeFileSync(file, docs.join("---\n"));
  const r = await runProgram("meshctl", ["validate", "-f", file]);
  const output = `${r.stdout}\n${r.stderr}`;
  const fields: FieldOutcome[] = probes.map((p, i) => ({
    probe: p,
    goodComplaints: complaintsAbout(output, file, p.kind, `good-${i}`, tmp),
    badComplaints: complaintsAbout(output, file, p.kind, `bad-${i}`, tmp),
  }));
  const samples = new Map(Object.keys(GATEWAY_DOCS).map((k) => [k, complaintsAbout(output, file, k, `sample-${k.toLowerCase()}`, tmp)]));
  const versionComplaints = versions.map((v, i) => complaintsAbout(output, file, v.kind, `version-${i}`, tmp));
  return { fields, samples, versionComplaints };
}

export interface ScenarioOutcome {
  readonly id: string;
  readonly outcome: string;
  readonly status: number | null;
  /** Whether the destination app received an X-Forwarded-Client-Cert header. */
  readonly xfcc: boolean;
  readonly error?: string;
}

/** The simulate scenarios of these ids, run in one `meshctl x simulate`. */
export async function probeScenarios(ids: readonly string[], tmp: string): Promise<Map<string, ScenarioOutcome>> {
  const scenarios: Array<{ id: string }> = [];
  for (const f of ["mtls.json", "jwt.json", "authz_gateway.json"]) {
    const parsed = JSON.parse(readFileSync(join(SIMULATE_FIXTURES, f), "utf8")) as { scenarios: Array<{ id: string }> };
    scenarios.push(...parsed.scenarios.filter((s) => ids.includes(s.id)));
  }
  const file = join(tmp, "scenarios.json");
  writeFileSync(file, JSON.stringify({ scenarios }));
  const r = await runProgram("meshctl", ["experimental", "simulate", "-f", file, "--parallel", "4"]);
  if (r.status !== 0 && r.stdout.trim() === "") throw new Error(`meshctl x simulate: exit ${r.status}: ${r.stderr.slice(-2000)}`);
  const out = new Map<string, ScenarioOutcome>();
  for (const line of r.stdout.split("\n").filter(Boolean)) {
    const o = JSON.parse(line) as { id: string; outcome: string; status: number | null; upstream: { headers?: Record<string, string> } | null; error?: string };
    out.set(o.id, {
      id: o.id,
      outcome: o.outcome,
      status: o.status,
      xfcc: Boolean(o.upstream?.headers?.["x-forwarded-client-cert"]),
      ...(o.error ? { error: o.error } : {}),
    });
  }
  return out;
}
