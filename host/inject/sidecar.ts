import { DEFAULT_DOMAIN } from "../mesh/hosts.ts";
import { APP_PROBERS_ENV, type AppProber } from "./app_probes.ts";
import { ENVOY_PROMETHEUS_PORT, ENVOY_STATUS_PORT, PROXY_GID, PROXY_UID, type PodCapture } from "./capture.ts";
import type { InjectionSettings } from "./settings.ts";

/** Annotations of the pod template (upstream `sidecar.istio.io/inject` and `/status`). */
export const INJECT_ANNOTATION = "sidecar.mesh.io/inject";
export const STATUS_ANNOTATION = "sidecar.mesh.io/status";

/** What the injector learnt about one pod template. */
export interface PodFacts {
  /** First declared container port, forwarded to by the inbound listener. */
  appPort?: number;
  /** `app` label of the template, else the workload's name: the proxy's service cluster. */
  app: string;
  /** What the pod's annotations decided about traffic capture (host/inject/capture.ts). */
  capture: PodCapture;
  /** The app containers' original probes by agent path (host/inject/app_probes.ts); empty: none rewritten. */
  probers: Readonly<Record<string, AppProber>>;
  /** The app containers' names and ports (upstream's MESH_META_APP_CONTAINERS, MESH_META_POD_PORTS). */
  appContainers: readonly string[];
  ports: readonly unknown[];
  /** The workload's name and owner reference (MESH_META_WORKLOAD_NAME, MESH_META_OWNER). */
  workloadName: string;
  owner?: string;
}

/** The projected service-account token the agent presents to the control plane (upstream `istio-token`). */
export const TOKEN_VOLUME = "mesh-token";
export const TOKEN_DIR = "/var/run/secrets/tokens";
export const TOKEN_AUDIENCE = "mesh-ca";
export const TOKEN_EXPIRATION_SECONDS = 43200;
/** The mesh's root certificate, published as a ConfigMap in every namespace (upstream `istio-ca-root-cert`, volume `istiod-ca-cert`). */
export const ROOT_CERT_VOLUME = "disco-ca-cert";
export const ROOT_CERT_CONFIG_MAP = "mesh-ca-root-cert";
export const ROOT_CERT_DIR = "/var/run/secrets/mesh";
/** The capture init container (upstream `istio-init`). */
export const INIT_CONTAINER_NAME = "mesh-init";

const fieldRef = (fieldPath: string) => ({ valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } });

/**
 * The container added to a pod: `disco-agent proxy sidecar` joined to the
 * control plane (`--discoveryAddress`, CA_ADDR, the projected token, the
 * mesh root), identity from the downward API, run as the proxy's user (the
 * capture rules exclude its traffic by it), readiness on 15021 and the app
 * probes replayed on the status port. `$(POD_NAMESPACE)` and the like are
 * expanded by the orchestrator from the container's environment.
 */
export function sidecarContainer(s: InjectionSettings, pod: PodFacts): Record<string, unknown> {
  const args = [
    "proxy",
    "sidecar",
    "--domain",
    `$(POD_NAMESPACE).svc.${s.clusterDomain ?? DEFAULT_DOMAIN}`,
    "--discoveryAddress",
    s.discoveryAddress,
    "--tokenPath",
    `${TOKEN_DIR}/${TOKEN_VOLUME}`,
    "--caRootCert",
    `${ROOT_CERT_DIR}/root-cert.pem`,
    "--serviceAccount",
    "$(SERVICE_ACCOUNT)",
    "--inboundPort",
    String(s.inboundPort),
    "--outboundPort",
    String(s.outboundPort),
    "--proxyAdminPort",
    String(s.proxyAdminPort),
    "--statusPort",
    String(pod.capture.statusPort),
    ...(pod.appPort === undefined ? [] : ["--appPort", String(pod.appPort)]),
    "--bindAddress",
    s.bindAddress,
    "--cluster",
    `hub_server=${s.hubAddress}`,
    "--serviceCluster",
    `${pod.app}.$(POD_NAMESPACE)`,
    "--drainDuration",
    s.drainDuration,
    "--parentShutdownDuration",
    s.parentShutdownDuration,
    ...(s.concurrency === undefined ? [] : ["--concurrency", String(s.concurrency)]),
    "--proxyLogLevel",
    s.logLevel,
    ...s.extraArgs,
  ];
  const value = (name: string, v: string) => ({ name, value: v });
  const tproxy = pod.capture.mode === "TPROXY";
  return {
    name: s.containerName,
    image: s.image,
    imagePullPolicy: s.imagePullPolicy,
    args,
    env: [
      value("CA_ADDR", s.caAddress),
      { name: "POD_NAME", ...fieldRef("metadata.name") },
      { name: "POD_NAMESPACE", ...fieldRef("metadata.namespace") },
      { name: "INSTANCE_IP", ...fieldRef("status.podIP") },
      { name: "SERVICE_ACCOUNT", ...fieldRef("spec.serviceAccountName") },
      { name: "HOST_IP", ...fieldRef("status.hostIP") },
      value("ENVOY_STATUS_PORT", String(ENVOY_STATUS_PORT)),
      value("ENVOY_PROMETHEUS_PORT", String(ENVOY_PROMETHEUS_PORT)),
      ...(s.trustDomain ? [value("TRUST_DOMAIN", s.trustDomain)] : []),
      value("MESH_META_POD_PORTS", JSON.stringify(pod.ports)),
      value("MESH_META_APP_CONTAINERS", pod.appContainers.join(",")),
      value("MESH_META_CLUSTER_ID", s.clusterId),
      { name: "MESH_META_NODE_NAME", ...fieldRef("spec.nodeName") },
      value("MESH_META_INTERCEPTION_MODE", pod.capture.mode),
      value("MESH_META_WORKLOAD_NAME", pod.workloadName),
      ...(pod.owner ? [value("MESH_META_OWNER", pod.owner)] : []),
      ...(s.meshId ? [value("MESH_META_MESH_ID", s.meshId)] : []),
      ...(Object.keys(pod.probers).length > 0 ? [value(APP_PROBERS_ENV, JSON.stringify(pod.probers))] : []),
      ...Object.entries(s.env).map(([name, v]) => value(name, v)),
    ],
    ports: [{ name: "http-envoy-prom", containerPort: ENVOY_PROMETHEUS_PORT, protocol: "TCP" }],
    readinessProbe: {
      httpGet: { path: "/healthz/ready", port: ENVOY_STATUS_PORT },
      ...s.readinessProbe,
    },
    resources: s.resources,
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: tproxy ? { add: ["NET_ADMIN"], drop: ["ALL"] } : { drop: ["ALL"] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsGroup: PROXY_GID,
      runAsNonRoot: true,
      runAsUser: PROXY_UID,
    },
    volumeMounts: [
      { name: ROOT_CERT_VOLUME, mountPath: ROOT_CERT_DIR },
      { name: TOKEN_VOLUME, mountPath: TOKEN_DIR },
    ],
  };
}

/** The capture init container: `disco-agent mesh-iptables` as root with the capabilities iptables needs. */
export function initContainer(s: InjectionSettings, pod: PodFacts): Record<string, unknown> {
  return {
    name: INIT_CONTAINER_NAME,
    image: s.image,
    imagePullPolicy: s.imagePullPolicy,
    args: pod.capture.args,
    resources: s.resources,
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { add: ["NET_ADMIN", "NET_RAW"], drop: ["ALL"] },
      privileged: false,
      readOnlyRootFilesystem: false,
      runAsGroup: 0,
      runAsNonRoot: false,
      runAsUser: 0,
    },
  };
}

/** The volumes the sidecar mounts: the projected token and the root ConfigMap. */
export function sidecarVolumes(): Record<string, unknown>[] {
  return [
    { name: ROOT_CERT_VOLUME, configMap: { name: ROOT_CERT_CONFIG_MAP } },
    {
      name: TOKEN_VOLUME,
      projected: { sources: [{ serviceAccountToken: { audience: TOKEN_AUDIENCE, expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: TOKEN_VOLUME } }] },
    },
  ];
}

/** Value of the status annotation, in upstream's shape: what was added, the revision, and the settings' hash. */
export function statusAnnotation(s: InjectionSettings, initContainers: readonly string[]): string {
  return JSON.stringify({
    version: s.version,
    initContainers: initContainers.length > 0 ? initContainers : null,
    containers: [s.containerName],
    volumes: [ROOT_CERT_VOLUME, TOKEN_VOLUME],
    imagePullSecrets: null,
    revision: s.revision ?? "default",
  });
}
