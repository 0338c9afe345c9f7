import { ConfigError } from "./errors.ts";
import { type ExtensionProviders, NO_EXTENSION_PROVIDERS, extensionProvidersOf } from "./extension_providers.ts";

/**
 * MeshConfig, upstream's mesh-wide settings file, decoded once for every
 * program that reads it: the sidecar (`disco-agent proxy --meshConfigFile`),
 * `disco-discovery --meshConfig`, `meshctl analyze --meshConfigFile` and
 * `meshctl orch-inject --meshConfigFile`. One list of fields, one defaults
 * table; each program names the fields it reads, and either refuses the
 * others (the sidecar: a typo must not pass silently) or reports them as
 * ignored (the control plane's file carries many upstream fields).
 */

/** The mesh's root namespace when none is configured (upstream: istio-system). */
export const DEFAULT_ROOT_NAMESPACE = "mesh-system";
/** The SPIFFE trust domain when none is configured. */
export const DEFAULT_TRUST_DOMAIN = "cluster.local";

export const OUTBOUND_TRAFFIC_POLICIES = ["ALLOW_ANY", "REGISTRY_ONLY"] as const;
export type OutboundTrafficPolicy = (typeof OUTBOUND_TRAFFIC_POLICIES)[number];

/** `pathNormalization.normalization`: how request paths are normalized before authorization (security.md §6). */
export const PATH_NORMALIZATIONS = ["NONE", "BASE", "MERGE_SLASHES", "DECODE_AND_MERGE_SLASHES"] as const;
export type PathNormalization = (typeof PATH_NORMALIZATIONS)[number];
export const DEFAULT_PATH_NORMALIZATION: PathNormalization = "BASE";

export const INGRESS_CONTROLLER_MODES = ["OFF", "DEFAULT", "STRICT"] as const;
export type IngressControllerMode = (typeof INGRESS_CONTROLLER_MODES)[number];

export interface MeshConfig {
  /** Where mesh-wide policies (and the hub, the ingress gateway) live. */
  readonly rootNamespace: string;
  readonly trustDomain: string;
  /** Clients originate mutual TLS to endpoints with a sidecar when no DestinationRule says otherwise. */
  readonly enableAutoMtls: boolean;
  readonly outboundTrafficPolicy: OutboundTrafficPolicy;
  /** REGISTRY_ONLY: an unknown host gets the catch-all 502 (true) or no route, 404 (false). */
  readonly enableFallthroughRoute: boolean;
  readonly pathNormalization: PathNormalization;
  /** The external authorizers CUSTOM AuthorizationPolicies name. */
  readonly extensionProviders: ExtensionProviders;
  /** OFF: no default ingress gateway is assumed (analyze). */
  readonly ingressControllerMode: IngressControllerMode;
  /** Name of the default ingress gateway's workload and service in the root namespace. */
  readonly ingressService: string;
  /** Its workloads carry the label `mesh: <ingressSelector>`. */
  readonly ingressSelector: string;
  /** The injected proxies' settings (upstream's ProxyConfig), decoded by injection (host/inject/settings.ts). */
  readonly defaultConfig: Readonly<Record<string, unknown>>;
}

export type MeshConfigField = keyof MeshConfig;

/** Every field's value when the file does not set it. */
export const MESH_CONFIG_DEFAULTS: MeshConfig = Object.freeze({
  rootNamespace: DEFAULT_ROOT_NAMESPACE,
  trustDomain: DEFAULT_TRUST_DOMAIN,
  enableAutoMtls: true,
  outboundTrafficPolicy: "ALLOW_ANY",
  enableFallthroughRoute: true,
  pathNormalization: DEFAULT_PATH_NORMALIZATION,
  extensionProviders: NO_EXTENSION_PROVIDERS,
  ingressControllerMode: "DEFAULT",
  ingressService: "mesh-ingressgateway",
  ingressSelector: "ingressgateway",
  defaultConfig: Object.freeze({}),
});

export interface MeshConfigReading {
  /** The fields this program reads, in the order an unknown-field error lists them. */
  readonly fields: readonly MeshConfigField[];
  /** Other top-level fields: refused (ConfigError), or named in `ignored`. */
  readonly otherFields: "refuse" | "ignore";
  /** Defaults that differ for this program (analyze: the root namespace of `-i`). */
  readonly defaults?: Partial<MeshConfig>;
  /** How an error names a valid root namespace (disco-discovery's messages say "a namespace name (a DNS label)"). */
  readonly expectedNamespace?: string;
}

export interface DecodedMeshConfig {
  readonly config: MeshConfig;
  /** The fields the file set (those this program reads). */
  readonly given: ReadonlySet<MeshConfigField>;
  /** Top-level fields present that this program does not read (with `otherFields: "ignore"`). */
  readonly ignored: readonly string[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DOMAIN = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/**
 * Decodes a parsed mesh config (`undefined`/`null`: an empty file). Throws
 * ConfigError naming the file and the field path (`(document)` for the
 * whole file). `outboundTrafficPolicy` takes upstream's object form
 * `{mode: REGISTRY_ONLY}` or the bare mode; `pathNormalization`
 * `{normalization: BASE}` or the bare value.
 *
 * @example decodeMeshConfig({ outboundTrafficPolicy: { mode: "REGISTRY_ONLY" } }, "mesh.yaml", { fields: ["outboundTrafficPolicy"], otherFields: "refuse" }).config.outboundTrafficPolicy // "REGISTRY_ONLY"
 */
export function decodeMeshConfig(doc: unknown, file: string, reading: MeshConfigReading): DecodedMeshConfig {
  const defaults: MeshConfig = { ...MESH_CONFIG_DEFAULTS, ...reading.defaults };
  const fail = (path: string, expected: string, got: unknown): never => {
    throw new ConfigError({ file }, path, expected, JSON.stringify(got));
  };
  const invalid = (path: string, reason: string): never => {
    const error = new ConfigError({ file }, path, reason);
    error.message = `${file}: ${path}: ${reason}`;
    throw error;
  };
  if (doc === null || doc === undefined) return { config: Object.freeze(defaults), given: new Set(), ignored: [] };
  if (typeof doc !== "object" || Array.isArray(doc)) return invalid("(document)", "expected a mapping of mesh settings");
  const m = doc as Record<string, unknown>;
  const reads = new Set<string>(reading.fields);
  const ignored: string[] = [];
  for (const k of Object.keys(m)) {
    if (reads.has(k)) continue;
    if (reading.otherFields === "refuse") invalid(k, `unknown field (expected one of ${reading.fields.join(", ")})`);
    ignored.push(k);
  }
  const given = new Set(reading.fields.filter((f) => m[f] !== undefined));

  const str = (path: string, v: unknown, re: RegExp, what: string): string => (typeof v === "string" && re.test(v) ? v : fail(path, what, v));
  const bool = (path: string, v: unknown): boolean => (typeof v === "boolean" ? v : fail(path, "true or false", v));
  const oneOf = <T extends string>(path: string, v: unknown, values: readonly T[]): T =>
    typeof v === "string" && values.includes(v as T) ? (v as T) : fail(path, `one of ${values.join(", ")}`, v);
  const wrapped = <T extends string>(name: string, key: string, values: readonly T[], fallback: T): T => {
    const v = m[name];
    if (v === undefined || v === null) return fallback;
    if (typeof v === "object" && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) if (k !== key) invalid(`${name}.${k}`, `unknown field (expected ${key})`);
      return o[key] === undefined ? fallback : oneOf(`${name}.${key}`, o[key], values);
    }
    return oneOf(name, v, values);
  };
  const read = <K extends MeshConfigField>(field: K, decode: (v: unknown) => MeshConfig[K]): MeshConfig[K] =>
    reads.has(field) && m[field] !== undefined ? decode(m[field]) : defaults[field];

  const config: MeshConfig = {
    rootNamespace: read("rootNamespace", (v) => str("rootNamespace", v, DNS_LABEL, reading.expectedNamespace ?? "a namespace name (DNS label)")),
    trustDomain: read("trustDomain", (v) => str("trustDomain", v, DOMAIN, "a trust domain (DNS name)")),
    enableAutoMtls: read("enableAutoMtls", (v) => bool("enableAutoMtls", v)),
    outboundTrafficPolicy: reads.has("outboundTrafficPolicy")
      ? wrapped("outboundTrafficPolicy", "mode", OUTBOUND_TRAFFIC_POLICIES, defaults.outboundTrafficPolicy)
      : defaults.outboundTrafficPolicy,
    enableFallthroughRoute: read("enableFallthroughRoute", (v) => bool("enableFallthroughRoute", v)),
    pathNormalization: reads.has("pathNormalization")
      ? wrapped("pathNormalization", "normalization", PATH_NORMALIZATIONS, defaults.pathNormalization)
      : defaults.pathNormalization,
    extensionProviders: reads.has("extensionProviders") ? extensionProvidersOf(m, file) : defaults.extensionProviders,
    // Upstream reads the mode case-insensitively.
    ingressControllerMode: read("ingressControllerMode", (v) => {
      const mode = typeof v === "string" ? v.toUpperCase() : v;
      return INGRESS_CONTROLLER_MODES.includes(mode as IngressControllerMode)
        ? (mode as IngressControllerMode)
        : fail("ingressControllerMode", `one of ${INGRESS_CONTROLLER_MODES.join(", ")}`, v);
    }),
    ingressService: read("ingressService", (v) => str("ingressService", v, /./, "a non-empty string")),
    ingressSelector: read("ingressSelector", (v) => str("ingressSelector", v, /./, "a non-empty string")),
    defaultConfig: read("defaultConfig", (v) =>
      typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fail("defaultConfig", "an object", v),
    ),
  };
  return { config: Object.freeze(config), given, ignored };
}
