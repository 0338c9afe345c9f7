import { stringify } from "yaml";
import type { ComponentName, ComponentSpec, OperatorSpec } from "./values.ts";

/**
 * The orchestrator objects of each control-plane component: ServiceAccount,
 * ClusterRole and binding, ConfigMaps, Deployment and Service, named as the
 * rest of the mesh expects them (`mesh-disco:15010` is the agent's default
 * `--discoveryAddress`, `mesh-hub.<ns>:9091` the injected sidecar's hub,
 * `mesh-ca` the CA's certificate name). Certificates of the components come
 * from the Secret `mesh.<service account>` (cert-chain.pem, key.pem,
 * root-cert.pem at /etc/certs, upstream's `istio.<service account>`),
 * optional: without it the TLS listeners report the missing files.
 */
export type Obj = Record<string, unknown>;

const CERTS_DIR = "/etc/certs";

interface Daemon {
  /** Deployment, Service and label `app` value. */
  readonly name: string;
  readonly program: string;
  readonly serviceAccount: string;
  readonly args: (spec: OperatorSpec) => string[];
  readonly ports: ReadonlyArray<{ name: string; port: number; containerPort: number }>;
  readonly readiness: { path: string; port: number };
  /** ConfigMaps (name → data) and where each is mounted. */
  readonly configMaps: (spec: OperatorSpec) => ReadonlyArray<{ name: string; data: Record<string, string>; mountPath: string }>;
  readonly extraVolumes?: ReadonlyArray<{ name: string; mountPath: string }>;
  readonly rules: readonly Obj[];
  /** Whether the daemon applies JWT_POLICY (mesh_ca; disco-discovery refuses a non-default one: it reads no tokens, docs/daemon-reference.md). */
  readonly jwtPolicy?: boolean;
}

const read = ["get", "list", "watch"];
const meshGroups = { apiGroups: ["config.mesh.io", "networking.mesh.io", "security.mesh.io"], resources: ["*"], verbs: read };

function meshConfigText(spec: OperatorSpec): string {
  const m = spec.meshConfig;
  return stringify({
    rootNamespace: m.rootNamespace,
    trustDomain: m.trustDomain,
    enableAutoMtls: m.enableAutoMtls,
    ...(m.accessLogFile ? { accessLogFile: m.accessLogFile } : {}),
  });
}

const DAEMONS: Readonly<Record<Exclude<ComponentName, "base">, Daemon>> = {
  disco: {
    name: "mesh-disco",
    program: "disco-discovery",
    serviceAccount: "mesh-disco-service-account",
    args: (s) => [
      "discovery",
      "--configDir",
      "/etc/mesh/resources",
      "--registries",
      "Mock",
      "--meshConfig",
      "/etc/mesh/config/mesh",
      "--domain",
      s.values.global.clusterDomain,
      "--log_output_level",
      s.values.global.logLevel,
    ],
    ports: [
      { name: "grpc-xds", port: 15010, containerPort: 15010 },
      { name: "tls-xds", port: 15012, containerPort: 15012 },
      { name: "https-webhook", port: 443, containerPort: 15017 },
      { name: "http-monitoring", port: 15014, containerPort: 15014 },
    ],
    readiness: { path: "/ready", port: 15014 },
    configMaps: (s) => [
      { name: "mesh", data: { mesh: meshConfigText(s) }, mountPath: "/etc/mesh/config" },
      { name: "mesh-disco-resources", data: {} as Record<string, string>, mountPath: "/etc/mesh/resources" },
    ],
    rules: [
      meshGroups,
      { apiGroups: [""], resources: ["pods", "services", "endpoints", "namespaces", "nodes", "secrets", "configmaps"], verbs: read },
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
        verbs: [...read, "update", "patch"],
      },
    ],
  },
  hub: {
    name: "mesh-hub",
    program: "hubs",
    serviceAccount: "mesh-hub-service-account",
    args: (s) => [
      "server",
      "--port",
      "9091",
      "--monitoringPort",
      "15014",
      "--configStoreURL",
      "fs:///etc/mesh/hub-config",
      "--configDefaultNamespace",
      s.meshConfig.rootNamespace,
      "--log_output_level",
      s.values.global.logLevel,
    ],
    ports: [
      { name: "grpc-hub", port: 9091, containerPort: 9091 },
      { name: "http-monitoring", port: 15014, containerPort: 15014 },
    ],
    readiness: { path: "/healthz", port: 15014 },
    configMaps: () => [{ name: "mesh-hub-config", data: {}, mountPath: "/etc/mesh/hub-config" }],
    rules: [meshGroups, { apiGroups: [""], resources: ["pods", "services", "endpoints", "namespaces", "configmaps"], verbs: read }],
  },
  anchor: {
    name: "mesh-ca",
    program: "mesh_ca",
    serviceAccount: "mesh-ca-service-account",
    jwtPolicy: true,
    args: (s) => [
      ...(s.values.anchor.selfSigned
        ? ["--self-signed-ca", "--self-signed-ca-cert-dir", "/var/run/mesh-ca"]
        : [
            "--signing-cert",
            `${CERTS_DIR}/ca-cert.pem`,
            "--signing-key",
            `${CERTS_DIR}/ca-key.pem`,
            "--cert-chain",
            `${CERTS_DIR}/cert-chain.pem`,
            "--root-cert",
            `${CERTS_DIR}/root-cert.pem`,
          ]),
      "--trust-domain",
      s.meshConfig.trustDomain,
      "--workload-cert-ttl",
      s.values.anchor.workloadCertTtl,
      "--grpc-port",
      "8060",
      "--monitoring-port",
      "15014",
      "--log_output_level",
      s.values.global.logLevel,
    ],
    ports: [
      { name: "grpc-anchor", port: 8060, containerPort: 8060 },
      { name: "http-monitoring", port: 15014, containerPort: 15014 },
    ],
    readiness: { path: "/healthz", port: 15014 },
    configMaps: () => [],
    extraVolumes: [{ name: "ca-dir", mountPath: "/var/run/mesh-ca" }],
    rules: [
      { apiGroups: [""], resources: ["secrets"], verbs: ["create", "get", "watch", "list", "update", "delete"] },
      { apiGroups: [""], resources: ["serviceaccounts", "services", "namespaces"], verbs: read },
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
    ],
  },
};

/** The labels of a component's objects (upstream's `app`, `istio` → `mesh`, `release`). */
export function componentLabels(component: ComponentName): Record<string, string> {
  return { app: component === "base" ? "mesh-base" : DAEMONS[component].name, mesh: component, "operator.mesh.io/component": component };
}

/** The objects of one daemon component (not `base`), in apply order. */
export function daemonObjects(component: Exclude<ComponentName, "base">, spec: OperatorSpec): Obj[] {
  const d = DAEMONS[component];
  const c: ComponentSpec = spec.components[component];
  const ns = spec.meshNamespace;
  const labels = componentLabels(component);
  const meta = (name: string, namespaced = true) => ({ name, ...(namespaced ? { namespace: ns } : {}), labels: { ...labels } });
  const roleName = `${d.name}-${ns}`;
  const configMaps = d.configMaps(spec);
  const volumes: Obj[] = [
    ...configMaps.map((m) => ({ name: m.name, configMap: { name: m.name } })),
    { name: "mesh-certs", secret: { secretName: `mesh.${d.serviceAccount}`, optional: true } },
    ...(d.extraVolumes ?? []).map((v) => ({ name: v.name, emptyDir: {} })),
  ];
  const mounts: Obj[] = [
    ...configMaps.map((m) => ({ name: m.name, mountPath: m.mountPath, readOnly: true })),
    { name: "mesh-certs", mountPath: CERTS_DIR, readOnly: true },
    ...(d.extraVolumes ?? []).map((v) => ({ name: v.name, mountPath: v.mountPath })),
  ];
  const resources = structuredClone(c.k8s.resources) as unknown as Obj;
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(d.serviceAccount) },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: meta(roleName, false), rules: structuredClone(d.rules) },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: meta(roleName, false),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
      subjects: [{ kind: "ServiceAccount", name: d.serviceAccount, namespace: ns }],
    },
    ...configMaps.map((m) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: meta(m.name), data: { ...m.data } })),
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta(d.name),
      spec: {
        replicas: c.k8s.replicaCount,
        selector: { matchLabels: { app: d.name } },
        strategy: { rollingUpdate: { maxSurge: "100%", maxUnavailable: "25%" } },
        template: {
          metadata: { labels: { ...labels }, annotations: { "sidecar.mesh.io/inject": "false" } },
          spec: {
            serviceAccountName: d.serviceAccount,
            securityContext: { fsGroup: 1337 },
            containers: [
              {
                name: d.program.replace("_", "-"),
                image: `${spec.hub}/${d.program}:${spec.tag}`,
                imagePullPolicy: spec.values.global.imagePullPolicy,
                args: d.args(spec),
                ports: d.ports.map((p) => ({ name: p.name, containerPort: p.containerPort, protocol: "TCP" })),
                env: [
                  { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
                  { name: "POD_NAMESPACE", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } } },
                  ...(d.jwtPolicy ? [{ name: "JWT_POLICY", value: spec.values.global.jwtPolicy }] : []),
                  ...(component === "anchor" ? anchorTokenEnv(spec) : []),
                ],
                readinessProbe: { httpGet: { path: d.readiness.path, port: d.readiness.port }, initialDelaySeconds: 1, periodSeconds: 3, timeoutSeconds: 5 },
                resources,
                securityContext: {
                  runAsUser: 1337,
                  runAsGroup: 1337,
                  runAsNonRoot: true,
                  readOnlyRootFilesystem: true,
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ["ALL"] },
                },
                volumeMounts: mounts,
              },
            ],
            volumes,
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta(d.name),
      spec: { selector: { app: d.name }, ports: d.ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.containerPort, protocol: "TCP" })) },
    },
  ];
}

/** mesh_ca's token verification (docs/mesh_ca.md "Authentication"): without keys it refuses first certificates, as it logs at start. */
function anchorTokenEnv(spec: OperatorSpec): Obj[] {
  const a = spec.values.anchor;
  return [...(a.tokenJwks ? [{ name: "TOKEN_JWKS", value: a.tokenJwks }] : []), ...(a.tokenIssuer ? [{ name: "TOKEN_ISSUER", value: a.tokenIssuer }] : [])];
}

/** Name and namespace of the disco-discovery Service (the webhooks' backend). */
export function discoService(spec: OperatorSpec): { name: string; namespace: string } {
  return { name: DAEMONS.disco.name, namespace: spec.meshNamespace };
}
