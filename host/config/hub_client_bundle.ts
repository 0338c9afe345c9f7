import { type DecodeContext, Field } from "./decode.ts";
import { type SourceDocument, resourceName } from "./documents.ts";
import { ConfigError } from "./errors.ts";
import {
  type HttpApiSpec,
  type HttpApiSpecBinding,
  type HttpClientConfig,
  type TcpClientConfig,
  type PatternChecks,
  type QuotaSpec,
  type QuotaSpecBinding,
  decodeHttpApiSpec,
  decodeHttpApiSpecBinding,
  decodeHttpClientConfig,
  decodeTcpClientConfig,
  decodeQuotaSpec,
  decodeQuotaSpecBinding,
  encodeHttpApiSpec,
  encodeHttpClientConfig,
  encodeTcpClientConfig,
} from "./resources/hub_client.ts";

export const CONFIG_API_VERSION = "config.mesh.io/v1alpha2";
export const DEFAULT_NAMESPACE = "default";

type Decoded =
  | { kind: "HTTPAPISpec"; spec: HttpApiSpec }
  | { kind: "HTTPAPISpecBinding"; spec: HttpApiSpecBinding }
  | { kind: "QuotaSpec"; spec: QuotaSpec }
  | { kind: "QuotaSpecBinding"; spec: QuotaSpecBinding };

export type HubClientResource = Decoded & { namespace: string; name: string; origin: SourceDocument };

/** The hub client's configuration as decoded from resource documents. */
export interface HubClientBundle {
  clientConfig?: HttpClientConfig;
  clientConfigOrigin?: SourceDocument;
  tcpClientConfig?: TcpClientConfig;
  tcpClientConfigOrigin?: SourceDocument;
  resources: HubClientResource[];
  warnings: string[];
}

const KINDS = ["HTTPAPISpec", "HTTPAPISpecBinding", "QuotaSpec", "QuotaSpecBinding", "HttpClientConfig", "TcpClientConfig"];

/**
 * Decodes the hub-client documents among `docs` (other kinds are skipped with
 * a warning), checks references between them (unless `references` is false:
 * one file of a folder decoded on its own), and returns typed values.
 * Throws ConfigError naming file, resource, field path and expectation.
 */
export function decodeHubClientDocuments(docs: SourceDocument[], checks: PatternChecks, { references = true } = {}): HubClientBundle {
  const bundle: HubClientBundle = { resources: [], warnings: [] };
  let clientOrigin: SourceDocument | undefined;
  const seen = new Map<string, SourceDocument>();
  for (const doc of docs) {
    const namespace = doc.namespace ?? DEFAULT_NAMESPACE;
    const context: DecodeContext = { file: doc.file, resource: resourceName({ ...doc, namespace }), warnings: bundle.warnings };
    const root = Field.root(doc.body, context);
    if (!KINDS.includes(doc.kind)) {
      root.get("kind").warn(`skipped: not a hub client resource (expected one of ${KINDS.join(", ")})`);
      continue;
    }
    if (doc.apiVersion !== CONFIG_API_VERSION) root.get("apiVersion").fail(CONFIG_API_VERSION);
    root.allowOnly(["apiVersion", "kind", "metadata", "spec"]);
    const key = `${doc.kind}/${namespace}/${doc.name}`;
    const earlier = seen.get(key);
    if (earlier) root.get("metadata.name").invalid(`duplicate ${doc.kind} ${namespace}/${doc.name} (first defined in ${earlier.file})`);
    seen.set(key, doc);
    const spec = root.get("spec");
    if (!spec.present) spec.fail("an object");
    switch (doc.kind) {
      case "HttpClientConfig":
        if (clientOrigin) root.invalid(`only one HttpClientConfig may be given (first in ${clientOrigin.file})`);
        clientOrigin = doc;
        bundle.clientConfig = decodeHttpClientConfig(spec, checks);
        bundle.clientConfigOrigin = doc;
        break;
      case "TcpClientConfig":
        if (bundle.tcpClientConfigOrigin) root.invalid(`only one TcpClientConfig may be given (first in ${bundle.tcpClientConfigOrigin.file})`);
        bundle.tcpClientConfig = decodeTcpClientConfig(spec, checks);
        bundle.tcpClientConfigOrigin = doc;
        break;
      case "HTTPAPISpec":
        bundle.resources.push({ kind: doc.kind, spec: decodeHttpApiSpec(spec, checks), namespace, name: doc.name, origin: doc });
        break;
      case "HTTPAPISpecBinding":
        bundle.resources.push({ kind: doc.kind, spec: decodeHttpApiSpecBinding(spec), namespace, name: doc.name, origin: doc });
        break;
      case "QuotaSpec":
        bundle.resources.push({ kind: doc.kind, spec: decodeQuotaSpec(spec, checks), namespace, name: doc.name, origin: doc });
        break;
      case "QuotaSpecBinding":
        bundle.resources.push({ kind: doc.kind, spec: decodeQuotaSpecBinding(spec), namespace, name: doc.name, origin: doc });
        break;
    }
  }
  if (references) checkReferences(bundle);
  return bundle;
}

function checkReferences(bundle: HubClientBundle): void {
  const defined = new Set(bundle.resources.map((r) => `${r.kind}/${r.namespace}/${r.name}`));
  for (const r of bundle.resources) {
    if (r.kind !== "HTTPAPISpecBinding" && r.kind !== "QuotaSpecBinding") continue;
    const [field, target] = r.kind === "HTTPAPISpecBinding" ? ["apiSpecs", "HTTPAPISpec"] : ["quotaSpecs", "QuotaSpec"];
    const refs = r.kind === "HTTPAPISpecBinding" ? r.spec.apiSpecs : r.spec.quotaSpecs;
    refs.forEach((ref, i) => {
      const ns = ref.namespace ?? r.namespace;
      if (!defined.has(`${target}/${ns}/${ref.name}`)) {
        throw new ConfigError(
          { file: r.origin.file, resource: resourceName(r) },
          `spec.${field}[${i}]`,
          `a reference to a defined ${target}`,
          `${ns}/${ref.name}, which is not defined`,
        );
      }
    });
  }
}

/** The filter's plugin configuration (one JSON document) for a bundle. */
export function pluginConfig(bundle: HubClientBundle): object {
  return {
    httpClientConfig: bundle.clientConfig ? encodeHttpClientConfig(bundle.clientConfig) : undefined,
    tcpClientConfig: bundle.tcpClientConfig ? encodeTcpClientConfig(bundle.tcpClientConfig) : undefined,
    resources: bundle.resources.map((r) => ({
      apiVersion: CONFIG_API_VERSION,
      kind: r.kind,
      metadata: { name: r.name, namespace: r.namespace },
      spec: r.kind === "HTTPAPISpec" ? encodeHttpApiSpec(r.spec) : r.spec,
    })),
  };
}

/**
 * Rewrites a problem the filter found in the plugin configuration (its paths
 * are `resources[N] (Kind ns/name).spec…` or `httpClientConfig.…`) to name the
 * file and resource the user wrote, like every other configuration error.
 */
export function describeFilterProblem(bundle: HubClientBundle, problem: string): string {
  const inResource = /^resources\[(\d+)\] \(([^)]*)\)\.(.*)$/s.exec(problem);
  if (inResource) {
    const origin = bundle.resources[Number(inResource[1])]?.origin;
    if (origin) return `${origin.file}: ${inResource[2]}: ${inResource[3]}`;
  }
  const inTcp = /^tcpClientConfig\.(.*)$/s.exec(problem);
  const tcp = bundle.tcpClientConfigOrigin;
  if (inTcp && tcp) return `${tcp.file}: ${resourceName({ ...tcp, namespace: tcp.namespace ?? DEFAULT_NAMESPACE })}: spec.${inTcp[1]}`;
  const inClient = /^httpClientConfig\.(.*)$/s.exec(problem);
  const client = bundle.clientConfigOrigin;
  if (inClient && client) return `${client.file}: ${resourceName({ ...client, namespace: client.namespace ?? DEFAULT_NAMESPACE })}: spec.${inClient[1]}`;
  return problem;
}
