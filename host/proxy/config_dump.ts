import type { LoadedConfig } from "../config/config_dir.ts";
import type { InboundSecurity } from "./filters/inbound_security.ts";
import type { EndpointFlag } from "../hub/clusters.ts";
import type { WorkloadTls } from "./workload_tls.ts";

/**
 * What the dump shows of the sidecar's options (host/proxy/sidecar.ts
 * SidecarOptions), declared here because the sidecar imports this file.
 */
export interface DumpedOptions {
  wasm: string;
  bindAddress: string;
  outboundBindAddress: string;
  adminBindAddress: string;
  tcpAppPort: number;
  appHost: string;
  appPort: number;
  clusters: ReadonlyMap<string, { host: string; port: number }>;
  inboundService: string;
  identity: Record<string, string>;
  security?: { tls: Pick<WorkloadTls, "secrets">; endpoints: ReadonlyMap<string, EndpointFlag>; containerPort: number };
}

/** The sidecar's bound ports (host/proxy/sidecar.ts SidecarAddresses), as the dump shows them. */
export interface DumpedAddresses {
  inbound: number;
  outbound: number;
  admin: number;
  status: number;
  tcp: number;
}

/** What /config_dump is built from. */
export interface ConfigDumpInput {
  options: DumpedOptions;
  addresses: DumpedAddresses;
  loaded: LoadedConfig | undefined;
  hasTcp: boolean;
  hasStatus: boolean;
  policy: Pick<InboundSecurity, "describe"> | undefined;
  /** Routes VirtualServices chose recently: VirtualService, route index, destination, how often (newest last). */
  servedRoutes?: ReadonlyArray<{ virtualService: string; routeIndex: number; destination: string; count: number }>;
}

/**
 * The sidecar's /config_dump: identity, listeners, routes, clusters,
 * endpoints, secrets, and the active configuration (files, the filter's
 * plugin JSON, and the decoded resources grouped by kind). meshctl
 * proxy-config, authn tls-check and authz check read it.
 */
export function buildConfigDump(input: ConfigDumpInput): unknown {
  const { options: o, addresses: a, loaded } = input;
  const app = `${o.appHost}:${o.appPort}`;
  const hubClusters = new Set(["hub_server", loaded?.bundle.clientConfig?.transport?.checkCluster, loaded?.bundle.clientConfig?.transport?.reportCluster]);
  const services = [...o.clusters].filter(([name]) => !hubClusters.has(name));
  const address: Record<string, string> = { outbound: o.outboundBindAddress, admin: o.adminBindAddress };
  const listener = (name: string, port: number, protocol: "HTTP" | "TCP", direction: string, filters: string[], upstream?: string) => ({
    name,
    address: address[name] ?? o.bindAddress,
    port,
    protocol,
    direction,
    filters,
    ...(upstream ? { upstream } : {}),
  });
  const mesh = loaded?.mesh;
  // The workload's labels: given with the identity, else those of the Pod document named by the identity (`<pod>.<namespace>`).
  const pod = mesh?.byKind.Pod.find((p) => `${p.name}.${p.namespace}` === o.identity.id);
  const labels = (o.identity as { labels?: Record<string, string> }).labels ?? pod?.labels;
  return {
    identity: { ...o.identity, ...(labels ? { labels } : {}) },
    listeners: {
      inbound: {
        ...listener("inbound", a.inbound, "HTTP", "INBOUND", ["mesh.hub_client", "mesh.router"], app),
        ...(o.inboundService ? { service: o.inboundService } : {}),
        ...(o.security ? { containerPort: o.security.containerPort } : {}),
        route: "inbound",
      },
      outbound: {
        ...listener("outbound", a.outbound, "HTTP", "OUTBOUND", ["mesh.hub_client", "mesh.router"]),
        upstream: "per authority: the --cluster named by the Host header, else the Host itself",
        route: "outbound",
      },
      ...(input.hasTcp ? { tcp: listener("tcp", a.tcp, "TCP", "INBOUND", ["mesh.hub_client", "mesh.tcp_proxy"], `${o.appHost}:${o.tcpAppPort}`) } : {}),
      admin: listener("admin", a.admin, "HTTP", "ADMIN", ["mesh.admin"]),
      ...(input.hasStatus ? { status: listener("status", a.status, "HTTP", "ADMIN", ["mesh.health"]) } : {}),
    },
    routes: [
      { name: "inbound", listener: "inbound", virtualHosts: [{ name: o.inboundService || "inbound", domains: ["*"], upstream: app }] },
      {
        name: "outbound",
        listener: "outbound",
        virtualHosts: [
          ...services.map(([name, c]) => ({ name, domains: [name, `${name}:*`], upstream: `${c.host}:${c.port}` })),
          { name: "passthrough", domains: ["*"], upstream: "the Host header's address (port 80 when none)" },
        ],
      },
    ],
    servedRoutes: input.servedRoutes ?? [],
    clusters: Object.fromEntries([...o.clusters].map(([k, v]) => [k, `${v.host}:${v.port}`])),
    endpoints: [
      { cluster: "inbound|app", endpoints: [{ address: o.appHost, port: o.appPort, health: "UNKNOWN" }] },
      ...(input.hasTcp ? [{ cluster: "inbound|tcp", endpoints: [{ address: o.appHost, port: o.tcpAppPort, health: "UNKNOWN" }] }] : []),
      ...[...o.clusters].map(([cluster, c]) => ({ cluster, endpoints: [{ address: c.host, port: c.port, health: "UNKNOWN" }] })),
    ],
    secrets: o.security
      ? o.security.tls.secrets()
      : { certificates: [], note: "none: this sidecar holds no certificates yet (no mutual TLS termination or origination)" },
    ...(o.security && input.policy ? { security: { ...(input.policy.describe() as object), endpoints: [...o.security.endpoints.values()] } } : {}),
    configuration: {
      files: loaded?.files ?? [],
      filter: loaded ? JSON.parse(loaded.plugin) : null,
      module: o.wasm,
      resources: Object.fromEntries(
        Object.entries(mesh?.byKind ?? {})
          .filter(([, list]) => list.length > 0)
          // Secret values (gateway private keys) never leave the process: their keys only, as `kubectl describe secret` shows them.
          .map(([kind, list]) => [
            kind,
            list.map((r) => ({
              name: r.name,
              namespace: r.namespace,
              labels: r.labels,
              annotations: r.annotations,
              file: r.origin.file,
              spec: kind === "Secret" ? { type: (r.spec as { type: string }).type, keys: Object.keys((r.spec as { data: object }).data) } : r.spec,
            })),
          ]),
      ),
      enforced: o.security !== undefined,
    },
  };
}
