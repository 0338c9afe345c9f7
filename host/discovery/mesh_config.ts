import { existsSync } from "node:fs";
import { Field } from "../config/decode.ts";
import { readSettingsObject } from "../config/source_text.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../mesh/policies.ts";
import { type ExtensionProviders, NO_EXTENSION_PROVIDERS, decodeExtensionProviders } from "../config/extension_providers.ts";

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
const READ = ["rootNamespace", "trustDomain", "extensionProviders", "enableAutoMtls", "defaultConfig"];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DOMAIN = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/**
 * Reads the mesh config. A missing file at the default path is the default
 * mesh (upstream: "unset uses a default mesh"); a missing file given
 * explicitly, or a bad field, throws ConfigError naming the file and field.
 */
export function readDiscoveryMeshConfig(file: string, explicit: boolean): DiscoveryMeshConfig {
  if (!explicit && !existsSync(file)) return { value: {}, rootNamespace: DEFAULT_ROOT_NAMESPACE, extensionProviders: NO_EXTENSION_PROVIDERS, enableAutoMtls: true, ignored: [] };
  const value = readSettingsObject(file);
  const root = Field.root(value, { file, warnings: [] });
  const rootNamespace = root.get("rootNamespace").optionalString() ?? DEFAULT_ROOT_NAMESPACE;
  if (!DNS_LABEL.test(rootNamespace)) root.get("rootNamespace").fail("a namespace name (a DNS label)");
  const trustDomain = root.get("trustDomain").optionalString();
  if (trustDomain !== undefined && !DOMAIN.test(trustDomain)) root.get("trustDomain").fail("a trust domain (a DNS name)");
  const extensionProviders = decodeExtensionProviders(root.get("extensionProviders"));
  const enableAutoMtls = root.get("enableAutoMtls").bool(true);
  return { file, value, rootNamespace, extensionProviders, enableAutoMtls, ...(trustDomain !== undefined ? { trustDomain } : {}), ignored: Object.keys(value).filter((k) => !READ.includes(k)) };
}
