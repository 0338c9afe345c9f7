import type { LoadedConfig } from "../config/config_dir.ts";
import type { EndpointFlag } from "../hub/clusters.ts";
import { buildRegistry } from "../mesh/registry.ts";
import type { CaptureRegistry } from "./listener/capture_routing.ts";
import { checkProviders } from "../config/extension_providers.ts";
import type { ExtAuthzClient } from "../security/authz/ext_authz.ts";
import type { Workload } from "../security/workload.ts";
import { ClusterManager } from "./cluster/cluster_manager.ts";
import type { OutlierDetector } from "./cluster/outlier_detection.ts";
import { InboundSecurity } from "./filters/inbound_security.ts";
import { RouteTable } from "./router/routes.ts";
import type { SidecarSecurityOptions } from "./sidecar_options.ts";

/**
 * The security path's per-configuration stages, built once when a
 * configuration is applied (Envoy's listeners, routes and clusters of one
 * xDS version): the inbound security filters, the cluster manager and the
 * route table over it. A configuration they refuse keeps the last good one.
 */
export interface AppliedChain {
  readonly security: InboundSecurity;
  readonly routes: RouteTable;
}

export function buildChain(
  config: LoadedConfig,
  sec: SidecarSecurityOptions,
  outliers: Pick<OutlierDetector, "ejected">,
  extAuthz: ExtAuthzClient,
  random: () => number = Math.random,
): AppliedChain {
  const pod = config.mesh.byKind.Pod.find((p) => p.name === sec.name && p.namespace === sec.namespace);
  const ports = pod ? pod.spec.containers.flatMap((c) => c.ports) : [];
  const workload: Workload = Object.freeze({
    name: sec.name,
    namespace: sec.namespace,
    labels: sec.labels ?? pod?.labels ?? {},
    serviceAccount: sec.serviceAccount,
    ports: ports.some((p) => p.containerPort === sec.containerPort) ? ports : [...ports, { containerPort: sec.containerPort, protocol: "TCP" as const }],
    sidecar: true,
  });
  // A CUSTOM policy naming no external authorizer of the mesh config is refused, naming spec.provider.name.
  checkProviders(config.mesh, sec.mesh.extensionProviders);
  const identity = { workload, containerPort: sec.containerPort, gateway: sec.gateway };
  const clusters = new ClusterManager(config.mesh, sec.mesh, workload, sec.endpoints, outliers);
  return {
    security: new InboundSecurity(config.mesh, sec.mesh, identity, sec.jwks, sec.clockSkewSeconds, extAuthz),
    routes: new RouteTable(config.mesh, sec.mesh, identity, clusters, random),
  };
}

/** What the outbound capture stage routes redirected connections by (listener/capture_routing.ts): the documents' services and the `--endpoint` addresses. */
export function captureRegistry(config: LoadedConfig, flags: Iterable<EndpointFlag>, domain: string): CaptureRegistry {
  const endpoints = [...flags].map((e) => ({ address: e.address.host, port: e.address.port, protocol: "http" }));
  return { services: buildRegistry(config.mesh.byKind, { domain }).services, endpoints };
}
