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
}

/**
 * The container added to a pod: `disco-agent proxy` with the listener ports of
 * docs/sidecar.md, identity from the downward API, a readiness probe on the
 * status port. `$(POD_NAMESPACE)` is expanded by the orchestrator from the
 * container's environment.
 */
export function sidecarContainer(s: InjectionSettings, pod: PodFacts): Record<string, unknown> {
  const args = [
    "proxy",
    "--inboundPort",
    String(s.inboundPort),
    "--outboundPort",
    String(s.outboundPort),
    "--proxyAdminPort",
    String(s.proxyAdminPort),
    "--statusPort",
    String(s.statusPort),
    ...(pod.appPort === undefined ? [] : ["--appPort", String(pod.appPort)]),
    "--bindAddress",
    s.bindAddress,
    "--configDir",
    s.configDir,
    "--cluster",
    `hub_server=${s.hubAddress}`,
    "--serviceCluster",
    `${pod.app}.$(POD_NAMESPACE)`,
    ...(s.clusterDomain === undefined ? [] : ["--domain", `$(POD_NAMESPACE).svc.${s.clusterDomain}`]),
    "--drainDuration",
    s.drainDuration,
    "--parentShutdownDuration",
    s.parentShutdownDuration,
    ...(s.concurrency === undefined ? [] : ["--concurrency", String(s.concurrency)]),
    "--proxyLogLevel",
    s.logLevel,
    ...s.extraArgs,
  ];
  const fieldRef = (fieldPath: string) => ({ valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } });
  return {
    name: s.containerName,
    image: s.image,
    imagePullPolicy: s.imagePullPolicy,
    args,
    env: [
      { name: "POD_NAME", ...fieldRef("metadata.name") },
      { name: "POD_NAMESPACE", ...fieldRef("metadata.namespace") },
      { name: "INSTANCE_IP", ...fieldRef("status.podIP") },
      ...Object.entries(s.env).map(([name, value]) => ({ name, value })),
    ],
    ports: [
      { name: "mesh-inbound", containerPort: s.inboundPort, protocol: "TCP" },
      { name: "mesh-status", containerPort: s.statusPort, protocol: "TCP" },
    ],
    readinessProbe: {
      httpGet: { path: "/healthz/ready", port: s.statusPort },
      ...s.readinessProbe,
    },
    resources: s.resources,
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsGroup: 1337,
      runAsNonRoot: true,
      runAsUser: 1337,
    },
    volumeMounts: [{ name: s.configMapName, mountPath: s.configDir, readOnly: true }],
  };
}

/** The ConfigMap with the sidecar's resource files; optional, so pods start before it exists. */
export function sidecarVolume(s: InjectionSettings): Record<string, unknown> {
  return { name: s.configMapName, configMap: { name: s.configMapName, optional: true } };
}

/** Value of the status annotation, in upstream's shape: what was added, and the settings' hash. */
export function statusAnnotation(s: InjectionSettings): string {
  return JSON.stringify({ version: s.version, initContainers: null, containers: [s.containerName], volumes: [s.configMapName], imagePullSecrets: null });
}
