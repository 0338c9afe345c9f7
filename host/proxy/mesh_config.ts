import { readFileSync } from "node:fs";
import { parseYaml } from "../config/yaml.ts";
import { ConfigError } from "../config/errors.ts";
import { type ExtensionProviders, NO_EXTENSION_PROVIDERS, extensionProvidersOf } from "../config/extension_providers.ts";
import { PATH_NORMALIZATIONS, type PathNormalization, DEFAULT_PATH_NORMALIZATION } from "../security/authz/path.ts";
import { DEFAULT_ROOT_NAMESPACE, DEFAULT_TRUST_DOMAIN } from "../security/workload.ts";

/**
 * Mesh-wide settings of the sidecar (`disco-agent proxy --meshConfigFile`;
 * issue 6; security.md §2.1, §5.3, §6). Upstream's MeshConfig field names;
 * the values the sidecar uses, decoded once into a frozen value.
 */

export const OUTBOUND_TRAFFIC_POLICIES = ["ALLOW_ANY", "REGISTRY_ONLY"] as const;
export type OutboundTrafficPolicy = (typeof OUTBOUND_TRAFFIC_POLICIES)[number];

export interface MeshSettings {
  readonly rootNamespace: string;
  readonly trustDomain: string;
  readonly enableAutoMtls: boolean;
  readonly outboundTrafficPolicy: OutboundTrafficPolicy;
  /** REGISTRY_ONLY: an unknown host gets the catch-all 502 (true) or no route, 404 (false). */
  readonly enableFallthroughRoute: boolean;
  readonly pathNormalization: PathNormalization;
  /** The external authorizers CUSTOM AuthorizationPolicies name (`extensionProviders`). */
  readonly extensionProviders: ExtensionProviders;
}

export const DEFAULT_MESH_SETTINGS: MeshSettings = Object.freeze({
  rootNamespace: DEFAULT_ROOT_NAMESPACE,
  trustDomain: DEFAULT_TRUST_DOMAIN,
  enableAutoMtls: true,
  outboundTrafficPolicy: "ALLOW_ANY",
  enableFallthroughRoute: true,
  pathNormalization: DEFAULT_PATH_NORMALIZATION,
  extensionProviders: NO_EXTENSION_PROVIDERS,
});

/** A mesh configuration that cannot be used; the message names the file and field path. */
export class MeshConfigError extends Error {
  readonly code = "MESH_CONFIG_INVALID";
  constructor(
    readonly file: string,
    readonly fieldPath: string,
    why: string,
  ) {
    super(`${file}: ${fieldPath || "(document)"}: ${why}`);
  }
}

const FIELDS = ["rootNamespace", "trustDomain", "enableAutoMtls", "outboundTrafficPolicy", "enableFallthroughRoute", "pathNormalization", "extensionProviders"];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DOMAIN = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/**
 * Decodes mesh settings from YAML text. `outboundTrafficPolicy` takes the
 * upstream object form `{mode: REGISTRY_ONLY}` or the bare mode;
 * `pathNormalization` takes `{normalization: BASE}` or the bare value.
 *
 * @example parseMeshConfig("outboundTrafficPolicy: {mode: REGISTRY_ONLY}", "mesh.yaml").outboundTrafficPolicy // "REGISTRY_ONLY"
 */
export function parseMeshConfig(text: string, file: string): MeshSettings {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new MeshConfigError(file, "", `not YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return DEFAULT_MESH_SETTINGS;
  if (typeof doc !== "object" || Array.isArray(doc)) throw new MeshConfigError(file, "", "expected a mapping of mesh settings");
  const m = doc as Record<string, unknown>;
  for (const k of Object.keys(m)) if (!FIELDS.includes(k)) throw new MeshConfigError(file, k, `unknown field (expected one of ${FIELDS.join(", ")})`);
  const str = (path: string, v: unknown, re: RegExp, what: string): string => {
    if (typeof v !== "string" || !re.test(v)) throw new MeshConfigError(file, path, `expected ${what}, got ${JSON.stringify(v)}`);
    return v;
  };
  const bool = (path: string, v: unknown): boolean => {
    if (typeof v !== "boolean") throw new MeshConfigError(file, path, `expected true or false, got ${JSON.stringify(v)}`);
    return v;
  };
  const oneOf = <T extends string>(path: string, v: unknown, values: readonly T[]): T => {
    if (typeof v !== "string" || !values.includes(v as T)) throw new MeshConfigError(file, path, `expected one of ${values.join(", ")}, got ${JSON.stringify(v)}`);
    return v as T;
  };
  const wrapped = <T extends string>(name: string, key: string, values: readonly T[], fallback: T): T => {
    const v = m[name];
    if (v === undefined || v === null) return fallback;
    if (typeof v === "object" && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) if (k !== key) throw new MeshConfigError(file, `${name}.${k}`, `unknown field (expected ${key})`);
      return o[key] === undefined ? fallback : oneOf(`${name}.${key}`, o[key], values);
    }
    return oneOf(name, v, values);
  };
  return Object.freeze({
    rootNamespace: m.rootNamespace === undefined ? DEFAULT_MESH_SETTINGS.rootNamespace : str("rootNamespace", m.rootNamespace, DNS_LABEL, "a namespace name (DNS label)"),
    trustDomain: m.trustDomain === undefined ? DEFAULT_MESH_SETTINGS.trustDomain : str("trustDomain", m.trustDomain, DOMAIN, "a trust domain (DNS name)"),
    enableAutoMtls: m.enableAutoMtls === undefined ? true : bool("enableAutoMtls", m.enableAutoMtls),
    outboundTrafficPolicy: wrapped("outboundTrafficPolicy", "mode", OUTBOUND_TRAFFIC_POLICIES, "ALLOW_ANY"),
    enableFallthroughRoute: m.enableFallthroughRoute === undefined ? true : bool("enableFallthroughRoute", m.enableFallthroughRoute),
    pathNormalization: wrapped("pathNormalization", "normalization", PATH_NORMALIZATIONS, DEFAULT_PATH_NORMALIZATION),
    extensionProviders: providers(m, file),
  });
}

function providers(m: Record<string, unknown>, file: string): ExtensionProviders {
  try {
    return extensionProvidersOf(m, file);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const prefix = `${file}: ${e.fieldPath}: `;
    throw new MeshConfigError(file, e.fieldPath, e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message);
  }
}

/** Reads and decodes `--meshConfigFile`. */
export function loadMeshConfig(file: string): MeshSettings {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new MeshConfigError(file, "", `cannot read: ${(e as Error).message}`);
  }
  return parseMeshConfig(text, file);
}
