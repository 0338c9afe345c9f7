import { DEFAULT_DOMAIN } from "../mesh/hosts.ts";
import type { CompileRegex } from "../regex/engine.ts";
import { compileRegex as filterCompileRegex, regexCompiler } from "../regex/engine.ts";
import type { FilterModule } from "../wasm/filter_module.ts";
import { Field } from "./decode.ts";
import { type SourceDocument, resourceName } from "./documents.ts";
import { ConfigError } from "./errors.ts";
import { type CollectingContext, type ConfigProblem, attempt, problemFromError, problemFromWarning } from "./problems.ts";
import {
  type HttpApiSpec,
  type HttpApiSpecBinding,
  type HttpClientConfig,
  type PatternChecks,
  type QuotaSpec,
  type QuotaSpecBinding,
  type TcpClientConfig,
  decodeHttpApiSpec,
  decodeHttpApiSpecBinding,
  decodeHttpClientConfig,
  decodeQuotaSpec,
  decodeQuotaSpecBinding,
  decodeTcpClientConfig,
} from "./resources/hub_client.ts";
import { type HubAccessLog, type HubMetrics, type HubQuota, type HubRule, HUB_API_VERSION, HUB_KINDS, decodeHubDocument } from "./resources/hub_rules.ts";
import {
  type DestinationRuleSpec,
  type GatewaySpec,
  type ServiceEntrySpec,
  type VirtualServiceSpec,
  MESH_GATEWAY,
  NETWORKING_API_VERSION,
  NETWORKING_API_VERSIONS,
  decodeDestinationRule,
  decodeGateway,
  decodeServiceEntry,
  decodeVirtualService,
} from "./resources/networking.ts";
import {
  type DeploymentSpec,
  type EndpointsSpec,
  type NamespaceSpec,
  type SecretSpec,
  type ServiceSpec,
  ORCH_APPS_API_VERSION,
  ORCH_CORE_API_VERSION,
  decodeDeployment,
  decodeEndpoints,
  decodeNamespace,
  decodeSecret,
  decodeService,
} from "./resources/orch.ts";
import { type EndpointSliceSpec, type PodWithStatus, ENDPOINT_SLICE_API_VERSION, decodeEndpointSlice, decodePod } from "./resources/orch_endpoints.ts";
import {
  type AuthorizationPolicySpec,
  type PeerAuthenticationSpec,
  type RequestAuthenticationSpec,
  SECURITY_API_VERSION,
  SECURITY_API_VERSIONS,
  decodeAuthorizationPolicy,
  decodePeerAuthentication,
  decodeRequestAuthentication,
} from "./resources/security.ts";
import { isDns1123Label, isDns1123Subdomain, labelMap } from "./resources/syntax.ts";

/**
 * The one entry point that turns resource documents into typed values:
 * `decodeDocuments(docs, checks)` decodes every kind the mesh knows, collects
 * every problem (not only the first), and returns frozen values grouped by
 * kind. `meshctl validate`, `analyze`, `authn tls-check` and the sidecar read
 * configuration through it.
 */

/** The typed `spec` of each kind the catalog decodes. */
export interface KindSpecs {
  PeerAuthentication: PeerAuthenticationSpec;
  RequestAuthentication: RequestAuthenticationSpec;
  AuthorizationPolicy: AuthorizationPolicySpec;
  DestinationRule: DestinationRuleSpec;
  Gateway: GatewaySpec;
  VirtualService: VirtualServiceSpec;
  ServiceEntry: ServiceEntrySpec;
  HTTPAPISpec: HttpApiSpec;
  HTTPAPISpecBinding: HttpApiSpecBinding;
  QuotaSpec: QuotaSpec;
  QuotaSpecBinding: QuotaSpecBinding;
  HttpClientConfig: HttpClientConfig;
  TcpClientConfig: TcpClientConfig;
  HubRule: HubRule;
  HubQuota: HubQuota;
  HubAccessLog: HubAccessLog;
  HubMetrics: HubMetrics;
  Service: ServiceSpec;
  Endpoints: EndpointsSpec;
  EndpointSlice: EndpointSliceSpec;
  Secret: SecretSpec;
  Namespace: NamespaceSpec;
  Pod: PodWithStatus;
  Deployment: DeploymentSpec;
}
export type Kind = keyof KindSpecs;

/** The preferred apiVersion of each kind (what generated documents carry). */
export const KIND_API_VERSIONS: Readonly<Record<Kind, string>> = Object.freeze({
  PeerAuthentication: SECURITY_API_VERSION,
  RequestAuthentication: SECURITY_API_VERSION,
  AuthorizationPolicy: SECURITY_API_VERSION,
  DestinationRule: NETWORKING_API_VERSION,
  Gateway: NETWORKING_API_VERSION,
  VirtualService: NETWORKING_API_VERSION,
  ServiceEntry: NETWORKING_API_VERSION,
  HTTPAPISpec: HUB_API_VERSION,
  HTTPAPISpecBinding: HUB_API_VERSION,
  QuotaSpec: HUB_API_VERSION,
  QuotaSpecBinding: HUB_API_VERSION,
  HttpClientConfig: HUB_API_VERSION,
  TcpClientConfig: HUB_API_VERSION,
  HubRule: HUB_API_VERSION,
  HubQuota: HUB_API_VERSION,
  HubAccessLog: HUB_API_VERSION,
  HubMetrics: HUB_API_VERSION,
  Service: ORCH_CORE_API_VERSION,
  Endpoints: ORCH_CORE_API_VERSION,
  EndpointSlice: ENDPOINT_SLICE_API_VERSION,
  Secret: ORCH_CORE_API_VERSION,
  Namespace: ORCH_CORE_API_VERSION,
  Pod: ORCH_CORE_API_VERSION,
  Deployment: ORCH_APPS_API_VERSION,
});
/** Every apiVersion a kind is served in (upstream serves several versions of one schema); the preferred one first. */
export const KIND_SERVED_VERSIONS: Readonly<Record<Kind, readonly string[]>> = Object.freeze(
  Object.fromEntries(
    Object.entries(KIND_API_VERSIONS).map(([kind, preferred]) => [
      kind,
      preferred === NETWORKING_API_VERSION ? NETWORKING_API_VERSIONS : preferred === SECURITY_API_VERSION ? SECURITY_API_VERSIONS : Object.freeze([preferred]),
    ]),
  ) as Record<Kind, readonly string[]>,
);
export const KINDS = Object.freeze(Object.keys(KIND_API_VERSIONS) as Kind[]);
const HUB_KINDS_SET: ReadonlySet<string> = new Set(HUB_KINDS);
const ORCH_KINDS: ReadonlySet<string> = new Set(["Service", "Endpoints", "EndpointSlice", "Secret", "Namespace", "Pod", "Deployment"]);
/** Kinds without a namespace: their id is `Kind name` and `namespace` is "". */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set(["Namespace"]);

/** Where a resource was read: its file and its 0-based position among the file's documents. */
export interface ResourceOrigin {
  readonly file: string;
  readonly index: number;
}

/** One decoded resource: identity, metadata and the typed spec. Deeply frozen. */
export interface Resource<K extends Kind = Kind> {
  readonly kind: K;
  readonly apiVersion: string;
  readonly name: string;
  /** metadata.namespace, else the default namespace; "" for cluster-scoped kinds (Namespace). */
  readonly namespace: string;
  /** `Kind namespace/name` (`Kind name` when cluster-scoped), as problems name it. */
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly origin: ResourceOrigin;
  readonly spec: KindSpecs[K];
}

export type AnyResource = { [K in Kind]: Resource<K> }[Kind];
export type ResourcesByKind = { readonly [K in Kind]: readonly Resource<K>[] };

export interface Catalog {
  /** Every valid resource, in input order. */
  readonly resources: readonly AnyResource[];
  /** The same resources grouped by kind (every kind present, possibly empty). */
  readonly byKind: ResourcesByKind;
  /** Errors and warnings, in input order. A resource with an error is left out of `resources`. */
  readonly problems: readonly ConfigProblem[];
  readonly errors: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
  /** How many documents were given and how many of them were refused. */
  readonly documents: number;
  readonly invalidDocuments: number;
  /** The mesh's DNS domain short hosts were resolved in (CatalogOptions.domain): the registry built from this catalog uses the same. */
  readonly domain: string;
}

/** The filter's own template parser and regex engine, so config load refuses exactly what the filter and hub would. */
export interface CatalogChecks extends PatternChecks {
  /** Compiles HubRule regexes (default: the filter engine of host/regex/engine.ts, loaded on first use). */
  compileRegex?: CompileRegex;
}

export interface CatalogOptions {
  /** Namespace of documents without metadata.namespace (meshctl `-n`); default `default`. */
  defaultNamespace?: string;
  /**
   * Also check references between resources (meshctl validate `-x`): binding →
   * HTTPAPISpec/QuotaSpec, VirtualService → Gateway. A broken reference is an
   * error on the referring resource, which stays in `resources`.
   */
  referential?: boolean;
  /** The mesh's DNS domain, in which short hosts of DestinationRules and VirtualService destinations resolve (`reviews` → `reviews.<ns>.svc.<domain>`); default `cluster.local`. */
  domain?: string;
}

export const DEFAULT_NAMESPACE = "default";
/**
 * Kinds whose unknown fields refuse the document, as upstream's strict proto
 * decoding does (issue 25): the security and networking resources, where a
 * misspelt field dropped with a warning leaves a workload less protected than
 * written (`mtls: {mdoe: STRICT}`, a DestinationRule's `tsl: {mode: MUTUAL}`).
 */
const STRICT_FIELD_KINDS: ReadonlySet<Kind> = new Set([
  "PeerAuthentication",
  "RequestAuthentication",
  "AuthorizationPolicy",
  "DestinationRule",
  "Gateway",
  "VirtualService",
  "ServiceEntry",
]);

/** Spec 1, TcpClientConfig.reportInterval: values under 1 s are reset to 1 s. */
const MIN_TCP_REPORT_INTERVAL_MS = 1000;

/** CatalogChecks backed by a loaded filter module. */
export function filterChecks(module: Pick<FilterModule, "checkTemplate" | "checkRegex" | "compileRegex">): CatalogChecks {
  return {
    template: (t) => module.checkTemplate(t),
    regex: (p) => module.checkRegex(p),
    compileRegex: regexCompiler(module),
  };
}

type SpecDecoder = (
  root: Field,
  doc: SourceDocument,
  namespace: string,
  id: string,
  checks: CatalogChecks,
  options: Required<CatalogOptions>,
  warnings: string[],
) => unknown;

const spec = (root: Field): Field => {
  const s = root.get("spec");
  if (!s.present) s.fail("an object");
  return s;
};

const DECODERS: Readonly<Record<Kind, SpecDecoder>> = {
  PeerAuthentication: (root) => decodePeerAuthentication(spec(root)),
  RequestAuthentication: (root) => decodeRequestAuthentication(spec(root)),
  AuthorizationPolicy: (root) =>
    root.get("spec").present ? decodeAuthorizationPolicy(root.get("spec")) : decodeAuthorizationPolicy(Field.root({}, root.context, "spec")),
  DestinationRule: (root, _d, ns, _i, _c, options) => decodeDestinationRule(spec(root), ns, options.domain),
  Gateway: (root) => decodeGateway(spec(root)),
  VirtualService: (root, _d, ns, _i, _c, options) => decodeVirtualService(spec(root), ns, options.domain),
  ServiceEntry: (root) => decodeServiceEntry(spec(root)),
  HTTPAPISpec: (root, _d, _n, _i, checks) => decodeHttpApiSpec(spec(root), checks),
  HTTPAPISpecBinding: (root) => decodeHttpApiSpecBinding(spec(root)),
  QuotaSpec: (root, _d, _n, _i, checks) => decodeQuotaSpec(spec(root), checks),
  QuotaSpecBinding: (root) => decodeQuotaSpecBinding(spec(root)),
  HttpClientConfig: (root, _d, _n, _i, checks) => decodeHttpClientConfig(spec(root), checks),
  TcpClientConfig: (root, _d, _n, _i, checks) => {
    const config = decodeTcpClientConfig(spec(root), checks);
    // Spec 1: a reportInterval under 1 s is reset to 1 s (by the filter); say so.
    if (config.reportIntervalMs !== undefined && config.reportIntervalMs < MIN_TCP_REPORT_INTERVAL_MS) {
      root.get("spec").get("reportInterval").warn("below the 1s minimum: the filter uses 1s");
    }
    return config;
  },
  HubRule: hubDecoder,
  HubQuota: hubDecoder,
  HubAccessLog: hubDecoder,
  HubMetrics: hubDecoder,
  Service: (root) => decodeService(root.get("spec")),
  Endpoints: (root) => decodeEndpoints(root),
  EndpointSlice: (root) => decodeEndpointSlice(root),
  Secret: (root) => decodeSecret(root),
  Namespace: () => decodeNamespace(),
  Pod: (root) => decodePod(root, spec(root)),
  Deployment: (root) => decodeDeployment(spec(root)),
};

function hubDecoder(
  root: Field,
  doc: SourceDocument,
  namespace: string,
  _id: string,
  checks: CatalogChecks,
  _o: Required<CatalogOptions>,
  warnings: string[],
): unknown {
  return decodeHubDocument(
    { ...doc, namespace },
    { defaultNamespace: namespace, compileRegex: checks.compileRegex ?? filterCompileRegex },
    warnings,
    (root.context as CollectingContext).errors,
  );
}

/**
 * Decodes every document of a known kind into a frozen typed value.
 * Unknown kinds are a warning (`unknown kind …`), not an error. Every problem
 * names file, resource, field path and what was expected; a document with an
 * error is left out of the catalog, the others are kept.
 *
 * @example
 * const filter = FilterModule.load();
 * const { documents, problems } = loadSources(["config/"]);
 * const catalog = decodeDocuments(documents, filterChecks(filter));
 * for (const pa of catalog.byKind.PeerAuthentication) console.log(pa.id, pa.spec.mtlsMode);
 */
export function decodeDocuments(docs: readonly SourceDocument[], checks: CatalogChecks, options: CatalogOptions = {}): Catalog {
  const opts: Required<CatalogOptions> = {
    defaultNamespace: options.defaultNamespace || DEFAULT_NAMESPACE,
    referential: options.referential ?? false,
    domain: options.domain || DEFAULT_DOMAIN,
  };
  const resources: AnyResource[] = [];
  const problems: ConfigProblem[] = [];
  const seen = new Map<string, SourceDocument>();
  let invalid = 0;
  for (const doc of docs) {
    const clusterScoped = CLUSTER_SCOPED_KINDS.has(doc.kind);
    const namespace = clusterScoped ? "" : (doc.namespace ?? opts.defaultNamespace);
    const id = clusterScoped ? `${doc.kind} ${doc.name}` : resourceName({ kind: doc.kind, name: doc.name, namespace });
    const origin = { file: doc.file, resource: id };
    const context: CollectingContext = { ...origin, warnings: [], errors: [] };
    const root = Field.root(doc.body, context);
    const decoder = (DECODERS as Record<string, SpecDecoder | undefined>)[doc.kind];
    if (!decoder || !Object.hasOwn(DECODERS, doc.kind) || isOtherGroupsKind(doc)) {
      root.get("kind").warn(`unknown kind ${JSON.stringify(doc.kind)} (apiVersion ${doc.apiVersion}): not checked`);
      problems.push(...context.warnings.map((w) => problemFromWarning(w, origin)));
      continue;
    }
    const kind = doc.kind as Kind;
    let value: AnyResource | undefined;
    try {
      const served = KIND_SERVED_VERSIONS[kind];
      if (!served.includes(doc.apiVersion)) root.get("apiVersion").fail(`${served.length > 1 ? "one of " : ""}${served.join(", ")} for kind ${kind}`);
      // Orchestrator documents carry many fields the mesh does not model; hub kinds check their own root.
      if (!ORCH_KINDS.has(kind) && !HUB_KINDS_SET.has(kind)) root.allowOnly(["apiVersion", "kind", "metadata", "spec"]);
      const meta = decodeMetadata(root.get("metadata"), kind, clusterScoped);
      const key = `${kind}/${namespace}/${doc.name}`;
      const earlier = seen.get(key);
      // As applying the files in order would: the later definition replaces the earlier one.
      if (earlier)
        root
          .get("metadata")
          .get("name")
          .warn(
            `${id} is defined again: this definition (${doc.file}, document ${doc.index + 1}) replaces the one in ${earlier.file}, document ${earlier.index + 1}`,
          );
      // Below metadata, as upstream decodes the spec of these kinds (a document's `status` stays a warning).
      context.strictFields = STRICT_FIELD_KINDS.has(kind);
      const decoded = DECODERS[kind](root, doc, namespace, id, checks, opts, context.warnings);
      if (context.errors!.length === 0) {
        seen.set(key, doc);
        value = deepFreeze({
          kind,
          apiVersion: doc.apiVersion,
          name: doc.name,
          namespace,
          id,
          labels: meta.labels,
          annotations: meta.annotations,
          origin: { file: doc.file, index: doc.index },
          spec: decoded,
        }) as AnyResource;
      }
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      context.errors!.push(e);
    }
    // Problems of one document in field order: errors first, then warnings.
    problems.push(...context.errors!.map((e) => problemFromError(e, origin)));
    problems.push(...context.warnings.map((w) => problemFromWarning(w, origin)));
    if (value) {
      const replaced = resources.findIndex((r) => r.kind === value!.kind && r.namespace === value!.namespace && r.name === value!.name);
      if (replaced >= 0) resources.splice(replaced, 1);
      resources.push(value);
    } else invalid++;
  }
  if (opts.referential) problems.push(...checkReferences(resources));
  return freezeCatalog(resources, problems, docs.length, invalid, opts.domain);
}

/**
 * A kind of the same name in another API group (the Gateway API's
 * `gateway.networking.k8s.io` Gateway) is not the mesh's: not checked, as
 * any unknown kind (orchestrator kinds excepted: a wrong version of them is an error). Upstream's and this mesh's own groups stay the mesh's,
 * so a wrong version there is an error naming the served ones.
 */
function isOtherGroupsKind(doc: SourceDocument): boolean {
  if (ORCH_KINDS.has(doc.kind)) return false;
  const slash = doc.apiVersion.indexOf("/");
  if (slash < 0) return false;
  const group = doc.apiVersion.slice(0, slash);
  return !/(^|\.)(mesh|istio)\.io$/.test(group) && !KIND_SERVED_VERSIONS[doc.kind as Kind]?.some((v) => v.startsWith(`${group}/`));
}

function decodeMetadata(
  md: Field,
  kind: Kind,
  clusterScoped: boolean,
): { labels: Readonly<Record<string, string>>; annotations: Readonly<Record<string, string>> } {
  md.object();
  const name = md.get("name");
  // Namespaces and Services become DNS labels; other names are DNS subdomains.
  if (kind === "Namespace" || kind === "Service") {
    if (!isDns1123Label(name.string()))
      name.fail("a DNS-1123 label (lower-case letters, digits and '-', up to 63, starting and ending with a letter or digit)");
  } else if (!isDns1123Subdomain(name.string())) {
    name.fail("a DNS-1123 subdomain (dot-separated lower-case labels of letters, digits and '-', up to 253)");
  }
  const ns = md.get("namespace");
  if (ns.present) {
    if (clusterScoped) ns.warn(`ignored: ${kind} is cluster-scoped`);
    else if (!isDns1123Label(ns.string())) ns.fail("a namespace name (DNS-1123 label)");
  }
  const labels = attempt(md.get("labels"), labelMap);
  const annotations = attempt(md.get("annotations"), (f) => Object.freeze(f.stringMap()));
  return { labels: labels ?? Object.freeze({}), annotations: annotations ?? Object.freeze({}) };
}

/**
 * References between resources (validate `-x`): HTTPAPISpecBinding.apiSpecs
 * → HTTPAPISpec, QuotaSpecBinding.quotaSpecs → QuotaSpec (namespace defaults
 * to the binding's), VirtualService.gateways → Gateway (short names in the
 * VirtualService's namespace; `mesh` is implicit).
 */
export function checkReferences(resources: readonly AnyResource[]): ConfigProblem[] {
  const defined = new Set(resources.map((r) => `${r.kind}/${r.namespace}/${r.name}`));
  const out: ConfigProblem[] = [];
  const report = (r: AnyResource, fieldPath: string, message: string) =>
    out.push(Object.freeze({ severity: "error", file: r.origin.file, resource: r.id, fieldPath, message }));
  for (const r of resources) {
    if (r.kind === "HTTPAPISpecBinding" || r.kind === "QuotaSpecBinding") {
      const [field, target, refs] =
        r.kind === "HTTPAPISpecBinding"
          ? (["apiSpecs", "HTTPAPISpec", r.spec.apiSpecs] as const)
          : (["quotaSpecs", "QuotaSpec", (r as Resource<"QuotaSpecBinding">).spec.quotaSpecs] as const);
      refs.forEach((ref, i) => {
        const ns = ref.namespace ?? r.namespace;
        if (!defined.has(`${target}/${ns}/${ref.name}`)) {
          report(r, `spec.${field}[${i}]`, `expected a reference to a ${target} in the given files, got ${ns}/${ref.name}, which is not defined`);
        }
      });
    }
    if (r.kind === "VirtualService") {
      r.spec.gateways.forEach((g, i) => {
        if (g === MESH_GATEWAY) return;
        const [ns, name] = g.includes("/") ? g.split("/", 2) : [r.namespace, g];
        if (!defined.has(`Gateway/${ns}/${name}`)) {
          report(r, `spec.gateways[${i}]`, `expected a reference to a Gateway in the given files, got ${ns}/${name}, which is not defined`);
        }
      });
    }
  }
  return out;
}

/** The resource of `kind` named `namespace/name` (namespace "" for cluster-scoped kinds). */
export function findResource<K extends Kind>(catalog: Catalog, kind: K, namespace: string, name: string): Resource<K> | undefined {
  return (catalog.byKind[kind] as readonly Resource<K>[]).find((r) => r.namespace === namespace && r.name === name);
}

function freezeCatalog(resources: AnyResource[], problems: ConfigProblem[], documents: number, invalidDocuments: number, domain: string): Catalog {
  const byKind = Object.fromEntries(KINDS.map((k) => [k, Object.freeze(resources.filter((r) => r.kind === k))])) as unknown as ResourcesByKind;
  return Object.freeze({
    resources: Object.freeze(resources),
    byKind: Object.freeze(byKind),
    problems: Object.freeze(problems),
    errors: Object.freeze(problems.filter((p) => p.severity === "error")),
    warnings: Object.freeze(problems.filter((p) => p.severity === "warning")),
    documents,
    invalidDocuments,
    domain,
  });
}

/** Freezes plain objects and arrays all the way down (Maps, Sets and class instances are frozen but not entered). */
function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value) || proto === Object.prototype || proto === null) {
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return Object.freeze(value);
}
