import { ConfigError } from "../../../config/errors.ts";
import { readSettingsObject } from "../../../config/source_text.ts";
import { type ExtensionProviders, extensionProvidersOf } from "../../../config/extension_providers.ts";

/**
 * The mesh config values the analyzers use (`--meshConfigFile`, upstream's
 * MeshConfig). Other keys of the file are the daemons' business and are
 * ignored; a used key with the wrong type is a usage error.
 */
export interface AnalyzeMeshConfig {
  /** Where mesh-wide policies and the ingress gateway live; default: `-i/--meshNamespace` (mesh-system). */
  readonly rootNamespace: string;
  /** Default true. Off: clients send plain text unless a DestinationRule says MESH_MUTUAL. */
  readonly enableAutoMtls: boolean;
  /** OFF: no default ingress gateway is assumed (see ingressService). */
  readonly ingressControllerMode: "OFF" | "DEFAULT" | "STRICT";
  /** Name of the assumed default ingress gateway workload and service in the root namespace. */
  readonly ingressService: string;
  /** Its workloads carry the label `mesh: <ingressSelector>`. */
  readonly ingressSelector: string;
  /** `extensionProviders`, known only with --meshConfigFile (CUSTOM AuthorizationPolicies' authorizers). */
  readonly extensionProviders?: ExtensionProviders;
  /**
   * `defaultConfig.proxyMetadata` turns on DNS capture (`MESH_META_DNS_CAPTURE`)
   * with address auto-allocation (`MESH_META_DNS_AUTO_ALLOCATE` or
   * `DISCO_ENABLE_IP_AUTOALLOCATE`): ServiceEntries then need no addresses.
   */
  readonly dnsAutoAllocate: boolean;
}

export const DEFAULT_INGRESS_SERVICE = "mesh-ingressgateway";
export const DEFAULT_INGRESS_SELECTOR = "ingressgateway";

export function defaultMeshConfig(rootNamespace: string): AnalyzeMeshConfig {
  return Object.freeze({
    rootNamespace,
    enableAutoMtls: true,
    ingressControllerMode: "DEFAULT",
    ingressService: DEFAULT_INGRESS_SERVICE,
    ingressSelector: DEFAULT_INGRESS_SELECTOR,
    dnsAutoAllocate: false,
  });
}

/** Reads `--meshConfigFile`; throws ConfigError naming the file and key. */
export function readMeshConfig(file: string, rootNamespace: string): AnalyzeMeshConfig {
  const values = readSettingsObject(file);
  const base = defaultMeshConfig(rootNamespace);
  const fail = (key: string, expected: string, got: unknown): never => {
    throw new ConfigError({ file }, key, expected, JSON.stringify(got));
  };
  const str = (key: string, fallback: string): string => {
    const v = values[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== "string" || v.length === 0) fail(key, "a non-empty string", v);
    return v as string;
  };
  const enableAutoMtls = values.enableAutoMtls ?? base.enableAutoMtls;
  if (typeof enableAutoMtls !== "boolean") fail("enableAutoMtls", "true or false", enableAutoMtls);
  const mode = str("ingressControllerMode", base.ingressControllerMode).toUpperCase();
  if (mode !== "OFF" && mode !== "DEFAULT" && mode !== "STRICT") fail("ingressControllerMode", "one of OFF, DEFAULT, STRICT", values.ingressControllerMode);
  return Object.freeze({
    rootNamespace: str("rootNamespace", base.rootNamespace),
    enableAutoMtls: enableAutoMtls as boolean,
    ingressControllerMode: mode as AnalyzeMeshConfig["ingressControllerMode"],
    ingressService: str("ingressService", base.ingressService),
    ingressSelector: str("ingressSelector", base.ingressSelector),
    extensionProviders: extensionProvidersOf(values, file),
    dnsAutoAllocate: dnsAutoAllocate(values),
  });
}

function dnsAutoAllocate(values: Record<string, unknown>): boolean {
  const dc = values.defaultConfig;
  const md = dc && typeof dc === "object" ? (dc as Record<string, unknown>).proxyMetadata : undefined;
  if (!md || typeof md !== "object") return false;
  const m = md as Record<string, unknown>;
  return m.MESH_META_DNS_CAPTURE === "true" && (m.MESH_META_DNS_AUTO_ALLOCATE === "true" || m.DISCO_ENABLE_IP_AUTOALLOCATE === "true");
}
