import { createHash } from "node:crypto";
import { DEFAULT_DOMAIN, isDnsDomain, serviceFqdn } from "../mesh/hosts.ts";
import { Field, type DecodeContext } from "../config/decode.ts";
import pkg from "../../package.json" with { type: "json" };
import { formatGoDuration, parseGoDuration } from "../daemon/duration.ts";
import { DEFAULT_ROOT_NAMESPACE, decodeMeshConfig } from "../config/mesh_config.ts";

/** Defaults of the injected sidecar; each can be changed by one of the three settings files. */
export const DEFAULT_CONTAINER_NAME = "mesh-proxy";
export const DEFAULT_HUB = "docker.io/mesh";
export const DEFAULT_PROXY_IMAGE = "disco-agent";
/** The sidecar image is tagged like the meshctl that injects it. */
export const DEFAULT_TAG = pkg.version;
export const DEFAULT_IMAGE_PULL_POLICY = "IfNotPresent";
export { DEFAULT_ROOT_NAMESPACE };
/** Listener ports of `disco-agent proxy` (docs/sidecar.md). */
export const DEFAULT_INBOUND_PORT = 15006;
export const DEFAULT_OUTBOUND_PORT = 15001;
export const DEFAULT_PROXY_ADMIN_PORT = 15000;
/** The agent serves no status port unless told; injected sidecars need one for the readiness probe (upstream: 15020). */
export const DEFAULT_STATUS_PORT = 15020;
export const DEFAULT_DRAIN_DURATION_MS = 45_000;
export const DEFAULT_PARENT_SHUTDOWN_DURATION_MS = 60_000;
export const DEFAULT_HUB_SERVICE = "mesh-hub";
export const DEFAULT_HUB_PORT = 9091;
/** Upstream's ProxyConfig `discoveryAddress` default, renamed: disco-discovery's secure xDS port in the system namespace. */
export const DEFAULT_DISCOVERY_SERVICE = "disco-discovery";
export const DEFAULT_DISCOVERY_PORT = 15012;
/** Upstream's ProxyConfig `interceptionMode` default. */
export const DEFAULT_INTERCEPTION_MODE = "REDIRECT";
export const INTERCEPTION_MODES = ["REDIRECT", "TPROXY", "NONE"] as const;
export type InterceptionMode = (typeof INTERCEPTION_MODES)[number];
/** Values' `global.multiCluster.clusterName` default (upstream's). */
export const DEFAULT_CLUSTER_ID = "Kubernetes";
/**
 * The inbound and status listeners on every address of the pod, as
 * upstream's virtualInbound (0.0.0.0:15006) and status port: the capture
 * rules send the proxy's own calls to its pod's address (an app calling its
 * own Service) to 127.0.0.1:15006, and the kubelet reaches the status port on
 * the pod's address. The agent keeps admin and outbound on loopback.
 */
export const DEFAULT_BIND_ADDRESS = "0.0.0.0";
export const DEFAULT_LOG_LEVEL = "warning";
export const DEFAULT_READINESS = { initialDelaySeconds: 1, periodSeconds: 2, failureThreshold: 30 } as const;
/** Upstream's sidecar resources (values `global.proxy.resources`). */
export const DEFAULT_RESOURCES = { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "2000m", memory: "1024Mi" } } as const;
export const PROXY_LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "critical", "off"] as const;

/** Everything injection needs, decoded once from the three settings files. */
export interface InjectionSettings {
  containerName: string;
  image: string;
  imagePullPolicy: string;
  rootNamespace: string;
  inboundPort: number;
  outboundPort: number;
  proxyAdminPort: number;
  statusPort: number;
  drainDuration: string;
  parentShutdownDuration: string;
  concurrency?: number;
  hubAddress: string;
  /** Values' `global.proxy.clusterDomain` (upstream's), when not `cluster.local`: the agent gets `--domain $(POD_NAMESPACE).svc.<it>`. */
  clusterDomain?: string;
  logLevel: string;
  /** ProxyConfig `discoveryAddress`: the sidecar's control plane (`--discoveryAddress`). */
  discoveryAddress: string;
  /** CA_ADDR: values' `global.caAddress`, else the discovery address (upstream: the CA is the control plane's). */
  caAddress: string;
  /** The control plane's revision (`mesh.io/rev`); undefined: the default one. */
  revision?: string;
  /** ProxyConfig `interceptionMode`; a pod's `sidecar.mesh.io/interceptionMode` annotation wins. */
  interceptionMode: InterceptionMode;
  /** Values' `global.multiCluster.clusterName`, `global.meshID`; mesh config `trustDomain`. */
  clusterId: string;
  meshId?: string;
  trustDomain?: string;
  /** Values' `sidecarInjectorWebhook.rewriteAppHTTPProbe` (default true); a pod's `sidecar.mesh.io/rewriteAppHTTPProbers` wins. */
  rewriteAppProbes: boolean;
  /** Values' `global.proxy` capture defaults (upstream's names); each pod's `traffic.sidecar.mesh.io/*` annotation wins. */
  capture: CaptureDefaults;
  bindAddress: string;
  extraArgs: readonly string[];
  env: Readonly<Record<string, string>>;
  readinessProbe: { initialDelaySeconds: number; periodSeconds: number; failureThreshold: number };
  resources: unknown;
  /** sha256 of the settings above: the `version` of the status annotation. */
  version: string;
}

/** The capture defaults of values' `global.proxy`, as upstream spells them. */
export interface CaptureDefaults {
  includeIPRanges: string;
  excludeIPRanges: string;
  includeInboundPorts: string;
  excludeInboundPorts: string;
  includeOutboundPorts: string;
  excludeOutboundPorts: string;
  excludeInterfaces: string;
}

export interface SettingsSources {
  /** Parsed `--injectConfigFile`, `--meshConfigFile`, `--valuesFile` objects and their file names. */
  injectConfig?: { file: string; value: Record<string, unknown> };
  meshConfig?: { file: string; value: Record<string, unknown> };
  values?: { file: string; value: Record<string, unknown> };
}

const PORT_MAX = 65535;

function root(source: { file: string; value: Record<string, unknown> } | undefined, warnings: string[]): Field {
  const context: DecodeContext = { file: source?.file, warnings };
  return Field.root(source?.value ?? {}, context);
}

function duration(field: Field, defaultMs: number): string {
  if (!field.present) return formatGoDuration(defaultMs);
  const ms = typeof field.value === "string" ? parseGoDuration(field.value) : undefined;
  if (ms === undefined || ms < 0) field.fail('a duration such as "45s" or "1m0s"');
  return formatGoDuration(ms);
}

/**
 * The sidecar's image: `defaultConfig.image` of the mesh config (a repository,
 * or a full reference when it carries a tag or digest), else values'
 * `global.proxy.image` (a full reference when it contains `/`, as upstream)
 * or `global.hub`/`global.proxy.image`; tagged with values' `global.tag`.
 */
function resolveImage(meshImage: string | undefined, hub: string, proxyImage: string, tag: string): string {
  const hasTag = (ref: string) => ref.includes("@") || ref.slice(ref.lastIndexOf("/") + 1).includes(":");
  const repository = meshImage ?? (proxyImage.includes("/") ? proxyImage : `${hub}/${proxyImage}`);
  return hasTag(repository) ? repository : `${repository}:${tag}`;
}

/**
 * Decodes the three settings files of `orch-inject` (formats in
 * docs/meshctl.md#orch-inject). Unknown fields are warned about; wrong types
 * throw ConfigError naming the file and field. `meshDomain`: the mesh's DNS
 * domain when values do not name one (disco-discovery's `--domain`).
 */
export function decodeInjectionSettings(
  sources: SettingsSources,
  warnings: string[],
  meshDomain = DEFAULT_DOMAIN,
  revision: string | undefined = undefined,
): InjectionSettings {
  const inject = root(sources.injectConfig, warnings).allowOnly(["containerName", "bindAddress", "extraArgs", "env", "readinessProbe"]);
  const mesh = root(sources.meshConfig, warnings);
  // A mesh config carries many upstream fields meshctl does not use: no unknown-field warnings at its top level.
  const proxy = mesh
    .get("defaultConfig")
    .allowOnly([
      "image",
      "inboundPort",
      "outboundPort",
      "proxyAdminPort",
      "statusPort",
      "drainDuration",
      "parentShutdownDuration",
      "concurrency",
      "hubAddress",
      "discoveryAddress",
      "interceptionMode",
    ]);
  const values = root(sources.values, warnings);
  const global = values.get("global");
  const valuesProxy = global.get("proxy");

  const rootNamespace = sources.meshConfig
    ? decodeMeshConfig(sources.meshConfig.value, sources.meshConfig.file, { fields: ["rootNamespace", "defaultConfig"], otherFields: "ignore" }).config
        .rootNamespace
    : DEFAULT_ROOT_NAMESPACE;
  const clusterDomain = valuesProxy.get("clusterDomain").optionalString() ?? meshDomain;
  if (!isDnsDomain(clusterDomain)) valuesProxy.get("clusterDomain").fail("a DNS domain such as cluster.local");
  const probe = inject.get("readinessProbe").allowOnly(["initialDelaySeconds", "periodSeconds", "failureThreshold"]);
  const concurrency = proxy.get("concurrency");
  const resources = valuesProxy.get("resources");
  if (resources.present) resources.object();
  const revisioned = revision && revision !== "default" ? `${DEFAULT_DISCOVERY_SERVICE}-${revision}` : DEFAULT_DISCOVERY_SERVICE;
  const discoveryAddress = proxy.get("discoveryAddress").optionalString() ?? `${revisioned}.${rootNamespace}.svc:${DEFAULT_DISCOVERY_PORT}`;
  if (!/^[^\s:]+:\d{1,5}$/.test(discoveryAddress)) proxy.get("discoveryAddress").fail("HOST:PORT");
  const trustDomain = mesh.get("trustDomain").optionalString();
  const meshId = global.get("meshID").optionalString();
  const settings = {
    containerName: inject.get("containerName").optionalString() ?? DEFAULT_CONTAINER_NAME,
    image: resolveImage(
      proxy.get("image").optionalString(),
      global.get("hub").optionalString() ?? DEFAULT_HUB,
      valuesProxy.get("image").optionalString() ?? DEFAULT_PROXY_IMAGE,
      global.get("tag").present ? String(global.get("tag").value) : DEFAULT_TAG,
    ),
    imagePullPolicy: global.get("imagePullPolicy").enumOf(["Always", "IfNotPresent", "Never"], DEFAULT_IMAGE_PULL_POLICY),
    rootNamespace,
    inboundPort: proxy.get("inboundPort").integer(1, PORT_MAX, DEFAULT_INBOUND_PORT),
    outboundPort: proxy.get("outboundPort").integer(1, PORT_MAX, DEFAULT_OUTBOUND_PORT),
    proxyAdminPort: proxy.get("proxyAdminPort").integer(1, PORT_MAX, DEFAULT_PROXY_ADMIN_PORT),
    statusPort: valuesProxy.get("statusPort").present
      ? valuesProxy.get("statusPort").integer(1, PORT_MAX)
      : proxy.get("statusPort").integer(1, PORT_MAX, DEFAULT_STATUS_PORT),
    drainDuration: duration(proxy.get("drainDuration"), DEFAULT_DRAIN_DURATION_MS),
    parentShutdownDuration: duration(proxy.get("parentShutdownDuration"), DEFAULT_PARENT_SHUTDOWN_DURATION_MS),
    concurrency: concurrency.present ? concurrency.integer(0, 1024) : undefined,
    hubAddress: proxy.get("hubAddress").optionalString() ?? `${serviceFqdn(DEFAULT_HUB_SERVICE, rootNamespace, clusterDomain)}:${DEFAULT_HUB_PORT}`,
    // Only a domain other than the default shows (and changes the settings' version): injected pods of the default mesh stay as they were.
    ...(clusterDomain === DEFAULT_DOMAIN ? {} : { clusterDomain }),
    logLevel: valuesProxy.get("logLevel").enumOf(PROXY_LOG_LEVELS, DEFAULT_LOG_LEVEL),
    discoveryAddress,
    caAddress: global.get("caAddress").optionalString() ?? discoveryAddress,
    ...(revision ? { revision } : {}),
    interceptionMode: proxy.get("interceptionMode").enumOf(INTERCEPTION_MODES, DEFAULT_INTERCEPTION_MODE),
    clusterId: global.get("multiCluster").get("clusterName").optionalString() ?? DEFAULT_CLUSTER_ID,
    ...(meshId ? { meshId } : {}),
    ...(trustDomain ? { trustDomain } : {}),
    capture: {
      includeIPRanges: valuesProxy.get("includeIPRanges").optionalString() ?? "*",
      excludeIPRanges: valuesProxy.get("excludeIPRanges").optionalString() ?? "",
      includeInboundPorts: valuesProxy.get("includeInboundPorts").optionalString() ?? "*",
      excludeInboundPorts: valuesProxy.get("excludeInboundPorts").optionalString() ?? "",
      includeOutboundPorts: valuesProxy.get("includeOutboundPorts").optionalString() ?? "",
      excludeOutboundPorts: valuesProxy.get("excludeOutboundPorts").optionalString() ?? "",
      excludeInterfaces: valuesProxy.get("excludeInterfaces").optionalString() ?? "",
    },
    rewriteAppProbes: values.get("sidecarInjectorWebhook").get("rewriteAppHTTPProbe").bool(true),
    bindAddress: inject.get("bindAddress").optionalString() ?? DEFAULT_BIND_ADDRESS,
    extraArgs: Object.freeze(
      inject
        .get("extraArgs")
        .list()
        .map((f) => f.string()),
    ),
    env: Object.freeze(inject.get("env").stringMap()),
    readinessProbe: {
      initialDelaySeconds: probe.get("initialDelaySeconds").integer(0, 3600, DEFAULT_READINESS.initialDelaySeconds),
      periodSeconds: probe.get("periodSeconds").integer(1, 3600, DEFAULT_READINESS.periodSeconds),
      failureThreshold: probe.get("failureThreshold").integer(1, 10_000, DEFAULT_READINESS.failureThreshold),
    },
    resources: resources.present ? resources.value : DEFAULT_RESOURCES,
  };
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(settings.containerName) || settings.containerName.length > 63) {
    inject.get("containerName").fail("a container name (lowercase letters, digits and '-', at most 63 characters)");
  }
  const version = createHash("sha256").update(JSON.stringify(settings)).digest("hex");
  return Object.freeze({ ...settings, version });
}
