import { existsSync } from "node:fs";
import { readSettingsObject } from "../config/source_text.ts";
import type { ExtensionProviders } from "../config/extension_providers.ts";
import { MESH_CONFIG_DEFAULTS, type MeshConfigField, decodeMeshConfig } from "../config/mesh_config.ts";

/**
 * `disco-discovery --meshConfig FILE` (upstream's MeshConfig YAML): the
 * fields that change what disco-discovery serves are read; the file is also
 * the injection webhook's mesh config, as `meshctl orch-inject
 * --meshConfigFile` reads it (`rootNamespace`, `defaultConfig` proxy
 * settings). Every other field present is named in `ignored`, so the daemon
 * can say it has no effect here.
 */
export interface DiscoveryMeshConfig {
  /** The file read, or undefined for the default mesh. */
  readonly file?: string;
  /** The parsed file, for the injection settings. */
  readonly value: Record<string, unknown>;
  /** Root namespace: mesh-wide DestinationRules (and the injected sidecar's hub address). */
  readonly rootNamespace: string;
  /** Trust domain callers of `--secureGrpcAddr` must belong to (unless `--trust-domain` says otherwise). */
  readonly trustDomain?: string;
  /** `extensionProviders`: the external authorizers CUSTOM AuthorizationPolicies name. */
  readonly extensionProviders: ExtensionProviders;
  /** `enableAutoMtls` (true): Envoy's outbound clusters without a DestinationRule `tls` originate mutual TLS to endpoints with a sidecar. */
  readonly enableAutoMtls: boolean;
  /** Top-level fields present that disco-discovery does not use. */
  readonly ignored: readonly string[];
}

/** What disco-discovery reads: rootNamespace, trustDomain, extensionProviders, enableAutoMtls; defaultConfig goes to injection. */
const READ: readonly MeshConfigField[] = ["rootNamespace", "trustDomain", "extensionProviders", "enableAutoMtls", "defaultConfig"];

/**
 * Reads the mesh config (host/config/mesh_config.ts decodes it). A missing
 * file at the default path is the default mesh (upstream: "unset uses a
 * default mesh"); a missing file given explicitly, or a bad field, throws
 * ConfigError naming the file and field.
 */
export function readDiscoveryMeshConfig(file: string, explicit: boolean): DiscoveryMeshConfig {
  const defaults = MESH_CONFIG_DEFAULTS;
  if (!explicit && !existsSync(file))
    return {
      value: {},
      rootNamespace: defaults.rootNamespace,
      extensionProviders: defaults.extensionProviders,
      enableAutoMtls: defaults.enableAutoMtls,
      ignored: [],
    };
  const value = readSettingsObject(file);
  const { config, given, ignored } = decodeMeshConfig(value, file, {
    fields: READ,
    otherFields: "ignore",
    expectedNamespace: "a namespace name (a DNS label)",
  });
  const { rootNamespace, extensionProviders, enableAutoMtls } = config;
  return { file, value, rootNamespace, extensionProviders, enableAutoMtls, ...(given.has("trustDomain") ? { trustDomain: config.trustDomain } : {}), ignored };
}
