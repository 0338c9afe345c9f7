// createFilter's options decoded once, at the edge, into typed values: the
// hub client configuration through the daemons' own decoder (and the module's
// own compiler, so a configuration the filter would refuse fails here with
// the file, resource and field path), and the hub's addresses as clusters.

import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseDocuments, readDocuments, type SourceDocument } from "../config/documents.ts";
import { ConfigError } from "../config/errors.ts";
import { type HubClientBundle, decodeHubClientDocuments, describeFilterProblem, pluginConfig } from "../config/hub_client_bundle.ts";
import { type Cluster, parseClusterSpec } from "../hub/clusters.ts";
import type { HubTlsOptions as HubConnectionTls } from "../hub/hub_connection.ts";
import { FilterModule } from "../wasm/filter_module.ts";
import type { FilterConfig, HubOptions, HubTlsOptions } from "./types.ts";

/** The cluster name the module calls when the configuration names none (assembly/config/client_config.ts). */
const DEFAULT_CLUSTER = "hub_server";
const CONFIG_FILE = /\.(ya?ml|json)$/;
/** How documents given as objects are named in errors. */
export const OBJECT_CONFIG_ORIGIN = "options.config";

/** A hub client configuration ready for the module. */
export interface LoadedFilterConfig {
  bundle: HubClientBundle;
  /** The module's plugin configuration (JSON). */
  plugin: string;
  /** The destination service requests are checked as, if any. */
  service: string | undefined;
}

/** `options` is not what createFilter takes; the message names the option. */
export class FilterOptionsError extends Error {
  readonly code = "FILTER_OPTIONS_INVALID";
}

/** The documents of `config`: a file, a folder's files, or objects. Throws ConfigError / FilterOptionsError. */
export function configDocuments(config: FilterConfig): SourceDocument[] {
  if (typeof config === "string") {
    let isDir: boolean;
    try {
      isDir = statSync(config).isDirectory();
    } catch (e) {
      throw new ConfigError({ file: config }, "(file)", "a readable file or folder", (e as NodeJS.ErrnoException).code ?? String(e));
    }
    if (!isDir) return readDocuments(config);
    const files = readdirSync(config)
      .filter((f) => CONFIG_FILE.test(f))
      .sort()
      .map((f) => join(config, f));
    if (files.length === 0) throw new ConfigError({ file: config }, "(folder)", "a folder with .yaml, .yml or .json files", "none");
    return files.flatMap((f) => readDocuments(f));
  }
  if (typeof config !== "object" || config === null)
    throw new FilterOptionsError(`options.config: expected a file, a folder or configuration documents, got ${config === null ? "null" : typeof config}`);
  // JSON is YAML: objects go through the same parser as files, with the same checks.
  return parseDocuments(JSON.stringify(config), OBJECT_CONFIG_ORIGIN);
}

/**
 * Decodes and compiles the configuration with `module` (the same engine the
 * running filter uses); throws ConfigError naming the file, resource and field.
 */
export function loadFilterConfig(config: FilterConfig, module: FilterModule, service: string | undefined): LoadedFilterConfig {
  const bundle = decodeHubClientDocuments(configDocuments(config), { template: (t) => module.checkTemplate(t), regex: (p) => module.checkRegex(p) });
  if (!bundle.clientConfig)
    throw new ConfigError({ file: typeof config === "string" ? config : OBJECT_CONFIG_ORIGIN }, "(documents)", "an HttpClientConfig document", "none");
  const plugin = JSON.stringify(pluginConfig(bundle));
  const compiled = module.configure(plugin);
  if ("error" in compiled) {
    const error = new ConfigError({}, "", "");
    error.message = describeFilterProblem(bundle, compiled.error);
    throw error;
  }
  module.release(compiled.handle);
  if (service !== undefined && (typeof service !== "string" || service.length === 0))
    throw new FilterOptionsError(`options.service: expected a service name, got ${JSON.stringify(service)}`);
  const resolved = service ?? bundle.clientConfig.defaultDestinationService;
  return { bundle, plugin, service: resolved };
}

/** The clusters the module will call, each at its address from `hub`. */
export function hubClusters(hub: string | HubOptions, bundle: HubClientBundle): Map<string, Cluster> {
  const options: HubOptions = typeof hub === "string" ? { address: hub } : hub;
  if (typeof options !== "object" || options === null)
    throw new FilterOptionsError(`options.hub: expected HOST:PORT or { address, check, report, tls }, got ${options === null ? "null" : typeof options}`);
  const transport = bundle.clientConfig?.transport;
  const wanted: Array<[string, "check" | "report"]> = [
    [transport?.checkCluster ?? DEFAULT_CLUSTER, "check"],
    [transport?.reportCluster ?? DEFAULT_CLUSTER, "report"],
  ];
  const clusters = new Map<string, Cluster>();
  for (const [name, role] of wanted) {
    const field = options[role] !== undefined ? role : "address";
    const address = options[field];
    const where = typeof hub === "string" ? "options.hub" : `options.hub.${field}`;
    if (address === undefined) throw new FilterOptionsError(`${where}: expected the ${role} cluster's address (HOST:PORT or unix:///PATH), got nothing`);
    if (typeof address !== "string") throw new FilterOptionsError(`${where}: expected HOST:PORT or unix:///PATH, got ${typeof address}`);
    let cluster: Cluster;
    try {
      cluster = parseClusterSpec(`${name}=${address}`);
    } catch (e) {
      throw new FilterOptionsError(
        `${where}: ${(e as Error).message.replace(/^--cluster "[^"]*": /, "").replace(/ \(expected NAME=HOST:PORT or NAME=unix:\/\/\/PATH\)$/, "")} (expected HOST:PORT or unix:///PATH)`,
      );
    }
    const earlier = clusters.get(name);
    if (earlier && earlier.target !== cluster.target)
      throw new FilterOptionsError(
        `${where}: the configuration sends Check and Report calls to one cluster, ${JSON.stringify(name)}, which cannot have two addresses (${earlier.target}, ${cluster.target})`,
      );
    clusters.set(name, cluster);
  }
  return clusters;
}

/** The hub connections' TLS: undefined (plain text), or mutual TLS from the given files. */
export function hubConnectionTls(hub: string | HubOptions): HubConnectionTls | undefined {
  const tls = typeof hub === "string" ? undefined : hub.tls;
  if (tls === undefined) return undefined;
  const read = (field: keyof HubTlsOptions): Buffer => {
    const path = tls[field];
    if (typeof path !== "string" || path.length === 0)
      throw new FilterOptionsError(`options.hub.tls.${field}: expected a PEM file, got ${path === undefined ? "nothing" : JSON.stringify(path)}`);
    try {
      return readFileSync(path);
    } catch (e) {
      throw new FilterOptionsError(`options.hub.tls.${field}: ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  };
  const ca = read("caFile");
  const cert = read("certFile");
  const key = read("keyFile");
  const identity = tls.hubIdentity;
  if (identity === undefined) return { ca, cert, key };
  return {
    ca,
    cert,
    key,
    // A mesh hub proves a SPIFFE identity, not a host name.
    checkServerIdentity: (_host, certificate) => {
      const uris = (certificate.subjectaltname ?? "")
        .split(", ")
        .filter((s) => s.startsWith("URI:"))
        .map((s) => s.slice(4));
      const ok = uris.some((u) => u === identity || u.endsWith(`/${identity.replace(/^\/+/, "")}`));
      return ok ? undefined : new Error(`hub identity: the hub presented ${uris.join(" ") || "no URI SAN"}, expected one ending with ${identity}`);
    },
  };
}
