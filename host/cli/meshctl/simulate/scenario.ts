import { parseYaml } from "../../../config/yaml.ts";
import { Field } from "../../../config/decode.ts";
import { ConfigError } from "../../../config/errors.ts";
import { type MeshSettings, MeshConfigError, parseMeshConfig } from "../../../proxy/mesh_config.ts";

/**
 * The scenario format of `meshctl x simulate -f FILE` (issue 6 item 6; fixed:
 * other tools read it). A file holds one scenario or `{"scenarios": [...]}`;
 * decoded once into frozen values, every problem naming its field path
 * (`scenarios[1].request.token.kind: expected one of valid, …`).
 */

export const WORKLOAD_KINDS = ["app", "ingress-gateway", "jwks-server", "external-client", "external-server"] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export const TOKEN_KINDS = ["valid", "invalid-signature", "expired", "malformed", "not-yet-valid", "alg-none", "alg-confusion"] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export const TOKEN_KEYS = ["key-1", "key-2"] as const;
export type TokenKey = (typeof TOKEN_KEYS)[number];

/** Defaults of a token descriptor (upstream's demo token uses the same issuer and subject). */
export const DEFAULT_TOKEN_ISSUER = "testing@secure.mesh.io";
export const DEFAULT_TOKEN_SUBJECT = "testing@secure.mesh.io";
export const DEFAULT_TOKEN_LIFETIME_S = 3600;
/** `expired`: exp this long before the minting time unless expSecondsFromNow says otherwise. */
export const DEFAULT_EXPIRED_AGO_S = 60;
/** `not-yet-valid`: nbf this long after the minting time unless nbfSecondsFromNow says otherwise. */
export const DEFAULT_NOT_YET_VALID_IN_S = 3600;

export interface PortSpec {
  readonly name: string;
  readonly protocol: string;
  /** null: the container port is bound to no service. */
  readonly servicePort: number | null;
  readonly containerPort: number;
}

export interface WorkloadSpec {
  readonly name: string;
  readonly namespace: string;
  readonly kind: WorkloadKind;
  readonly labels: Readonly<Record<string, string>>;
  readonly serviceAccount: string;
  readonly service?: string;
  readonly sidecar: boolean;
  readonly ports: readonly PortSpec[];
  readonly hostname?: string;
  /** `<ns>/<name>`. */
  readonly id: string;
}

export type TokenLocation = { readonly header: string; readonly prefix: string } | { readonly query: string };

export interface TokenSpec {
  readonly kind: TokenKind;
  readonly iss: string;
  readonly sub: string;
  readonly expSecondsFromNow?: number;
  readonly nbfSecondsFromNow?: number;
  readonly aud?: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
  readonly key: TokenKey;
  readonly location: TokenLocation;
}

export type Target = { readonly host: string; readonly port: number } | { readonly workload: string; readonly containerPort: number };

export interface RequestSpec {
  readonly from: string;
  readonly to: Target;
  readonly method: string;
  readonly path: string;
  readonly authority?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly tokens: readonly TokenSpec[];
  readonly clockOffsetSeconds: number;
}

export interface Scenario {
  /** The scenario's `id`, else its 0-based index in the file. */
  readonly id: string | number;
  /** Field path prefix of this scenario (`scenarios[2]`, or "" for a single scenario). */
  readonly path: string;
  readonly mesh: MeshSettings;
  /** `meshConfig` as written (what the sidecars are given); `{}` when absent. */
  readonly meshConfig: Readonly<Record<string, unknown>>;
  readonly workloads: readonly WorkloadSpec[];
  /** The resource documents as written (placeholders not yet substituted). */
  readonly resources: readonly Field[];
  readonly request: RequestSpec;
}

const SCENARIO_FIELDS = ["id", "description", "meshConfig", "workloads", "resources", "request"];
const WORKLOAD_FIELDS = ["name", "namespace", "kind", "labels", "serviceAccount", "service", "sidecar", "ports", "hostname"];
const PORT_FIELDS = ["name", "protocol", "servicePort", "containerPort"];
const REQUEST_FIELDS = ["from", "to", "method", "path", "authority", "headers", "token", "tokens", "clockOffsetSeconds"];
const TOKEN_FIELDS = ["kind", "iss", "sub", "expSecondsFromNow", "nbfSecondsFromNow", "aud", "claims", "key", "location"];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const HOST = /^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_PORT = 65535;
const DAY_S = 86_400 * 3650;

/** Sidecars and apps need a port; the default is one HTTP port 80 (service port 80 when a service is set). */
const DEFAULT_PORT = (service: boolean): PortSpec => Object.freeze({ name: "http", protocol: "HTTP", servicePort: service ? 80 : null, containerPort: 80 });
/** A jwks-server stands for `http://jwks.mesh-system.svc.cluster.local:8000/jwks.json`. */
const JWKS_PORT: PortSpec = Object.freeze({ name: "http", protocol: "HTTP", servicePort: 8000, containerPort: 8000 });

/**
 * Parses and decodes a scenario file (JSON or YAML text).
 *
 * @example decodeScenarioFile('{"scenarios": []}', "s.json") // []
 * @throws ConfigError naming the file and the field path
 */
export function decodeScenarioFile(text: string, file: string, warnings: string[] = []): Scenario[] {
  const context = { file, warnings };
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ConfigError(context, "(file)", "valid JSON or YAML", JSON.stringify((e as Error).message.split("\n")[0]));
  }
  const root = Field.root(doc, context);
  root.object();
  if (root.get("scenarios").present) {
    root.allowOnly(["scenarios"]);
    return root
      .get("scenarios")
      .list()
      .map((f, i) => decodeScenario(f, i));
  }
  return [decodeScenario(root, 0)];
}

function decodeScenario(f: Field, index: number): Scenario {
  f.object();
  f.allowOnly(SCENARIO_FIELDS);
  const idField = f.get("id");
  let id: string | number = index;
  if (idField.present) {
    if (typeof idField.value !== "string" && typeof idField.value !== "number") idField.fail("a string or a number");
    id = idField.value as string | number;
  }
  f.get("description").optionalString();
  const mesh = decodeMesh(f.get("meshConfig"));
  const workloads = f
    .get("workloads")
    .list()
    .map((w) => decodeWorkload(w));
  const seen = new Map<string, string>();
  for (const [i, w] of workloads.entries()) {
    const where = `${f.get("workloads").path}[${i}]`;
    if (seen.has(w.id)) new Field(w.name, `${where}.name`, f.context).invalid(`duplicate workload ${w.id} (first at ${seen.get(w.id)})`);
    seen.set(w.id, where);
  }
  const resourcesField = f.get("resources");
  const resources = resourcesField.list();
  for (const r of resources) r.object();
  const request = decodeRequest(f.get("request"), workloads);
  const meshConfig = (f.get("meshConfig").present ? f.get("meshConfig").value : {}) as Record<string, unknown>;
  return Object.freeze({ id, path: f.path, mesh, meshConfig, workloads: Object.freeze(workloads), resources: Object.freeze(resources), request });
}

function decodeMesh(f: Field): MeshSettings {
  if (!f.present) return parseMeshConfig("", "meshConfig");
  f.object();
  try {
    return parseMeshConfig(JSON.stringify(f.value), "meshConfig");
  } catch (e) {
    if (!(e instanceof MeshConfigError)) throw e;
    const why = e.message.slice(`meshConfig: ${e.fieldPath || "(document)"}: `.length);
    const at = e.fieldPath ? new Field(undefined, `${f.path}.${e.fieldPath}`, f.context) : f;
    return at.invalid(why);
  }
}

function dnsLabel(f: Field, what: string): string {
  const s = f.string();
  if (!DNS_LABEL.test(s)) f.fail(`${what} (DNS-1123 label)`);
  return s;
}

function decodeWorkload(f: Field): WorkloadSpec {
  f.object();
  f.allowOnly(WORKLOAD_FIELDS);
  const name = dnsLabel(f.get("name"), "a workload name");
  const namespace = f.get("namespace").present ? dnsLabel(f.get("namespace"), "a namespace name") : "default";
  const kind = f.get("kind").enumOf(WORKLOAD_KINDS, "app");
  const labels = f.get("labels").present ? Object.freeze(f.get("labels").stringMap()) : Object.freeze({ app: name });
  const serviceAccount = f.get("serviceAccount").present ? dnsLabel(f.get("serviceAccount"), "a service account name") : name;
  const service = f.get("service").present ? dnsLabel(f.get("service"), "a service name") : undefined;
  const proxiedByDefault = kind === "app" || kind === "ingress-gateway";
  const sidecar = f.get("sidecar").bool(proxiedByDefault);
  if (kind === "ingress-gateway" && !sidecar) f.get("sidecar").fail("true for an ingress-gateway (the gateway is a sidecar in gateway mode)");
  if ((kind === "jwks-server" || kind === "external-client" || kind === "external-server") && sidecar) f.get("sidecar").fail(`false for a ${kind}`);
  const portFields = f.get("ports").list();
  const ports = portFields.length === 0 ? [kind === "jwks-server" ? JWKS_PORT : DEFAULT_PORT(service !== undefined)] : portFields.map(decodePort);
  const containerPorts = new Set<number>();
  for (const [i, p] of ports.entries()) {
    if (containerPorts.has(p.containerPort)) portFields[i].get("containerPort").invalid(`duplicate containerPort ${p.containerPort}`);
    containerPorts.add(p.containerPort);
  }
  const hostnameField = f.get("hostname");
  const hostname = hostnameField.present ? hostnameField.string() : undefined;
  if (hostname !== undefined && !HOST.test(hostname)) hostnameField.fail("a host name");
  return Object.freeze({ name, namespace, kind, labels, serviceAccount, service, sidecar, ports: Object.freeze(ports), hostname, id: `${namespace}/${name}` });
}

function decodePort(f: Field, i: number): PortSpec {
  f.object();
  f.allowOnly(PORT_FIELDS);
  const servicePort = f.get("servicePort").present ? f.get("servicePort").integer(1, MAX_PORT) : null;
  return Object.freeze({
    name: f.get("name").present ? f.get("name").string() : `port-${i}`,
    protocol: f.get("protocol").present ? f.get("protocol").enumOf(["HTTP", "HTTP2", "GRPC", "TCP"]) : "HTTP",
    servicePort,
    containerPort: f.get("containerPort").integer(1, MAX_PORT),
  });
}

function decodeRequest(f: Field, workloads: readonly WorkloadSpec[]): RequestSpec {
  f.object();
  f.allowOnly(REQUEST_FIELDS);
  const byId = new Map(workloads.map((w) => [w.id, w]));
  const fromField = f.get("from");
  const from = fromField.string();
  const client = byId.get(from.includes("/") ? from : `default/${from}`);
  if (!client) return fromField.fail(`a workload of this scenario as <namespace>/<name> (${workloads.map((w) => w.id).join(", ") || "none defined"})`);
  if (client.kind === "jwks-server") fromField.invalid(`${client.id} is a jwks-server: it sends no requests`);
  const to = decodeTarget(f.get("to"), byId);
  const method = f.get("method").present ? f.get("method").string() : "GET";
  if (!/^[A-Z]+$/.test(method)) f.get("method").fail("an HTTP method in capitals (GET, POST, …)");
  const path = f.get("path").present ? f.get("path").string() : "/";
  if (!path.startsWith("/")) f.get("path").fail('a path starting with "/"');
  const authority = f.get("authority").present ? f.get("authority").nonEmptyString() : undefined;
  const headers: Record<string, string> = {};
  for (const [name, h] of f.get("headers").entries()) {
    if (!HEADER_NAME.test(name)) h.invalid("not a valid header name");
    headers[name.toLowerCase()] = h.string();
  }
  if (f.get("token").present && f.get("tokens").present) f.invalid("expected at most one of token, tokens, got both");
  const tokens = f.get("token").present ? [decodeToken(f.get("token"))] : f.get("tokens").list().map(decodeToken);
  const clockOffsetSeconds = f.get("clockOffsetSeconds").integer(-DAY_S, DAY_S, 0);
  return Object.freeze({ from: client.id, to, method, path, authority, headers: Object.freeze(headers), tokens: Object.freeze(tokens), clockOffsetSeconds });
}

function decodeTarget(f: Field, byId: ReadonlyMap<string, WorkloadSpec>): Target {
  if (typeof f.value === "string") {
    const m = /^(.+):(\d+)$/.exec(f.value);
    if (!m || !HOST.test(m[1]) || Number(m[2]) < 1 || Number(m[2]) > MAX_PORT) f.fail("<host>:<port> or {workload, containerPort}");
    return Object.freeze({ host: m[1].toLowerCase(), port: Number(m[2]) });
  }
  if (!f.present) f.fail("<host>:<port> or {workload, containerPort}");
  f.object();
  f.allowOnly(["workload", "containerPort"]);
  const ref = f.get("workload").string();
  const w = byId.get(ref.includes("/") ? ref : `default/${ref}`);
  if (!w) return f.get("workload").fail(`a workload of this scenario as <namespace>/<name>`);
  if (w.kind === "external-client") f.get("workload").invalid(`${w.id} is an external-client: it accepts no connections`);
  const containerPort = f.get("containerPort").integer(1, MAX_PORT);
  if (!w.ports.some((p) => p.containerPort === containerPort))
    f.get("containerPort").fail(`a container port of ${w.id} (${w.ports.map((p) => p.containerPort).join(", ")})`);
  return Object.freeze({ workload: w.id, containerPort });
}

function decodeToken(f: Field): TokenSpec {
  f.object();
  f.allowOnly(TOKEN_FIELDS);
  const kind = f.get("kind").enumOf(TOKEN_KINDS, "valid");
  const num = (name: string) => (f.get(name).present ? f.get(name).integer(-DAY_S, DAY_S) : undefined);
  const audField = f.get("aud");
  const aud = audField.present ? Object.freeze(audField.list().map((a) => a.string())) : undefined;
  const claimsField = f.get("claims");
  const claims = claimsField.present ? claimsField.object() : {};
  for (const reserved of ["iss", "sub", "exp", "nbf", "aud", "iat"])
    if (reserved in claims) claimsField.get(reserved).invalid(`set ${reserved} with the descriptor's own field`);
  return Object.freeze({
    kind,
    iss: f.get("iss").present ? f.get("iss").string() : DEFAULT_TOKEN_ISSUER,
    sub: f.get("sub").present ? f.get("sub").string() : DEFAULT_TOKEN_SUBJECT,
    expSecondsFromNow: num("expSecondsFromNow"),
    nbfSecondsFromNow: num("nbfSecondsFromNow"),
    aud,
    claims: Object.freeze({ ...claims }),
    key: f.get("key").enumOf(TOKEN_KEYS, "key-1"),
    location: decodeLocation(f.get("location")),
  });
}

function decodeLocation(f: Field): TokenLocation {
  if (!f.present) return Object.freeze({ header: "authorization", prefix: "Bearer " });
  f.object();
  f.allowOnly(["header", "prefix", "query"]);
  const which = f.oneOf(["header", "query"]);
  if (which === "query") {
    if (f.get("prefix").present) f.get("prefix").invalid("a prefix applies to a header location only");
    return Object.freeze({ query: f.get("query").nonEmptyString() });
  }
  const header = f.get("header").string();
  if (!HEADER_NAME.test(header)) f.get("header").fail("a header name");
  return Object.freeze({ header: header.toLowerCase(), prefix: f.get("prefix").present ? f.get("prefix").string() : "" });
}
