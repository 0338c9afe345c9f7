import { readSettingsObject } from "../../../config/source_text.ts";
import type { ExtensionProviders } from "../../../config/extension_providers.ts";
import { MESH_CONFIG_DEFAULTS, type MeshConfigField, decodeMeshConfig } from "../../../config/mesh_config.ts";

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

export const DEFAULT_INGRESS_SERVICE = MESH_CONFIG_DEFAULTS.ingressService;
export const DEFAULT_INGRESS_SELECTOR = MESH_CONFIG_DEFAULTS.ingressSelector;

/** The MeshConfig fields the analyzers read. */
const READ: readonly MeshConfigField[] = [
  "rootNamespace",
  "enableAutoMtls",
  "ingressControllerMode",
  "ingressService",
  "ingressSelector",
  "extensionProviders",
];

export function defaultMeshConfig(rootNamespace: string): AnalyzeMeshConfig {
  return Object.freeze({
    rootNamespace,
    enableAutoMtls: MESH_CONFIG_DEFAULTS.enableAutoMtls,
    ingressControllerMode: MESH_CONFIG_DEFAULTS.ingressControllerMode,
    ingressService: DEFAULT_INGRESS_SERVICE,
    ingressSelector: DEFAULT_INGRESS_SELECTOR,
    dnsAutoAllocate: false,
  });
}

/** Reads `--meshConfigFile` (host/config/mesh_config.ts decodes it); throws ConfigError naming the file and key. */
export function readMeshConfig(file: string, rootNamespace: string): AnalyzeMeshConfig {
  const values = readSettingsObject(file);
  const { config } = decodeMeshConfig(values, file, { fields: READ, otherFields: "ignore", defaults: { rootNamespace } });
  return Object.freeze({
    rootNamespace: config.rootNamespace,
    enableAutoMtls: config.enableAutoMtls,
    ingressControllerMode: config.ingressControllerMode,
    ingressService: config.ingressService,
    ingressSelector: config.ingressSelector,
    extensionProviders: config.extensionProviders,
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
