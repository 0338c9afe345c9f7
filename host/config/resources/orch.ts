import type { Field } from "../decode.ts";
import { attempt, attemptEach, noErrorsYet } from "../problems.ts";
import { isDns1123Label, isIanaServiceName, labelMap, port, MAX_PORT, MIN_PORT } from "./syntax.ts";

/**
 * Orchestrator documents (`v1` Service, Endpoints, Namespace, Pod;
 * `apps/v1` Deployment), read offline so the analyzer learns services, ports, namespaces
 * and workload labels from the same files as the mesh resources. Only the
 * fields the mesh needs are modelled; other fields are the orchestrator's
 * business and are neither checked nor warned about.
 */
export const ORCH_CORE_API_VERSION = "v1";
export const ORCH_APPS_API_VERSION = "apps/v1";

export const ORCH_PROTOCOLS = ["TCP", "UDP", "SCTP"] as const;
/** One of ORCH_PROTOCOLS, or another value the document gave (kept with a warning). */
export type OrchProtocol = (typeof ORCH_PROTOCOLS)[number] | (string & {});

export interface ServicePort {
  readonly name?: string;
  readonly port: number;
  /** A container port number or a container port name; defaults to `port`. */
  readonly targetPort: number | string;
  readonly protocol: OrchProtocol;
  readonly appProtocol?: string;
}

export interface ServiceSpec {
  /** Undefined: a service without selector (endpoints managed elsewhere). */
  readonly selector?: Readonly<Record<string, string>>;
  readonly ports: readonly ServicePort[];
  readonly type: string;
  /** `clusterIP`/`clusterIPs` when given (not `None`): the addresses clients may call the service on. */
  readonly addresses: readonly string[];
  /** `clusterIP: None`: a headless service (clients reach its pods' own addresses). */
  readonly headless?: boolean;
  /** `publishNotReadyAddresses`: every pod the selector matches counts as ready, terminating ones too. */
  readonly publishNotReadyAddresses?: boolean;
}

export interface ContainerPort {
  readonly containerPort: number;
  readonly name?: string;
  readonly protocol: OrchProtocol;
}

export interface Container {
  readonly name: string;
  readonly image?: string;
  readonly ports: readonly ContainerPort[];
  /** `securityContext.runAsUser`, when given. */
  readonly runAsUser?: number;
}

export interface PodSpec {
  /** `default` when absent, as the orchestrator fills it in. */
  readonly serviceAccountName: string;
  readonly containers: readonly Container[];
  /** `hostNetwork: true`: the pod uses the node's network (no traffic capture). */
  readonly hostNetwork?: boolean;
  /** The node a Pod was scheduled on, when the document says. */
  readonly nodeName?: string;
  /** `securityContext.runAsUser` of the pod, when given. */
  readonly runAsUser?: number;
}

export const SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;
export type SelectorOperator = (typeof SELECTOR_OPERATORS)[number];

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly matchExpressions: readonly LabelSelectorRequirement[];
}

export interface PodTemplate {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly spec: PodSpec;
}

export interface DeploymentSpec {
  readonly replicas: number;
  readonly selector: LabelSelector;
  readonly template: PodTemplate;
}

/** One address of an `Endpoints` subset; `targetRef` names the Pod behind it when the orchestrator knows it. */
export interface EndpointAddress {
  readonly ip: string;
  readonly hostname?: string;
  readonly targetRef?: { readonly kind: string; readonly name: string; readonly namespace?: string };
}

export interface EndpointPort {
  readonly name?: string;
  readonly port: number;
  readonly protocol: OrchProtocol;
  readonly appProtocol?: string;
}

export interface EndpointSubset {
  /** Ready addresses: the ones traffic goes to. */
  readonly addresses: readonly EndpointAddress[];
  readonly notReadyAddresses: readonly EndpointAddress[];
  readonly ports: readonly EndpointPort[];
}

/** `v1` Endpoints (named after its Service): the addresses the Service's ports are served on. No `spec`: `subsets` is at the root. */
export interface EndpointsSpec {
  readonly subsets: readonly EndpointSubset[];
}

/**
 * `v1` Secret (no `spec`: `type`, `data` base64, `stringData` at the root),
 * read for the certificates a Gateway server's `credentialName` names: type
 * `kubernetes.io/tls` with `tls.crt` and `tls.key` (as `kubectl create
 * secret tls` writes it). `data` holds the decoded values, `stringData` wins.
 */
export interface SecretSpec {
  readonly type: string;
  readonly data: Readonly<Record<string, string>>;
}

/** Namespaces carry only metadata (labels such as `mesh-injection: enabled`). */
export type NamespaceSpec = Readonly<Record<string, never>>;

/**
 * `TCP`, `UDP`, `SCTP`, in any case as upstream's analyzer reads files
 * (stored upper case). Another value (`HTTP`, meant as the port's
 * application protocol) is kept with a warning, as upstream's analyzer reads
 * it: the orchestrator would refuse it, and the mesh takes the protocol from
 * the port name or appProtocol.
 */
export function protocol(f: Field): OrchProtocol {
  if (!f.present) return "TCP";
  const upper = f.string().toUpperCase();
  if (upper === "") f.fail(`one of ${ORCH_PROTOCOLS.join(", ")}`);
  if (!(ORCH_PROTOCOLS as readonly string[]).includes(upper))
    f.warn(
      `expected one of ${ORCH_PROTOCOLS.join(", ")}, got ${JSON.stringify(f.value)}: the orchestrator refuses it (name the port <protocol>[-<suffix>] or set appProtocol for the application protocol)`,
    );
  return upper as OrchProtocol;
}

function targetPort(f: Field, fallback: number | undefined): number | string {
  if (!f.present) return fallback as number;
  if (typeof f.value === "string" && !/^\d+$/.test(f.value)) {
    if (!isIanaServiceName(f.value))
      f.fail(`a port number from ${MIN_PORT} to ${MAX_PORT} or a container port name (up to 15 lower-case letters, digits and '-')`);
    return f.value;
  }
  return port(f);
}

export function decodeService(spec: Field): ServiceSpec {
  if (!spec.present) return Object.freeze({ ports: Object.freeze([]), type: "ClusterIP", addresses: Object.freeze([]) });
  spec.object();
  const selector = spec.get("selector").present ? attempt(spec.get("selector"), labelMap) : undefined;
  const portsField = spec.get("ports");
  const names = new Set<string>();
  const ports = attemptEach(portsField, (p): ServicePort => {
    p.object();
    const number = port(p.get("port"));
    const nameField = p.get("name");
    // The orchestrator wants names on several ports; upstream's analyzer reads such files anyway (service-port-name says what is unknown).
    const name = nameField.present ? nameField.nonEmptyString() : undefined;
    if (name !== undefined) {
      if (!isDns1123Label(name)) nameField.fail("a DNS-1123 label");
      if (names.has(name)) nameField.invalid(`duplicate port name ${JSON.stringify(name)}`);
      names.add(name);
    }
    return Object.freeze({
      name,
      port: number,
      targetPort: targetPort(p.get("targetPort"), number),
      protocol: protocol(p.get("protocol")),
      appProtocol: p.get("appProtocol").optionalString(),
    });
  });
  const addresses = new Set<string>();
  for (const ip of [spec.get("clusterIP").value, ...(Array.isArray(spec.get("clusterIPs").value) ? (spec.get("clusterIPs").value as unknown[]) : [])]) {
    if (typeof ip === "string" && ip !== "" && ip !== "None") addresses.add(ip);
  }
  const headless = spec.get("clusterIP").value === "None";
  const publishNotReadyAddresses = attempt(spec.get("publishNotReadyAddresses"), (f) => f.bool(false));
  return Object.freeze({
    selector,
    ports: Object.freeze(ports),
    type: spec.get("type").optionalString() ?? "ClusterIP",
    addresses: Object.freeze([...addresses]),
    ...(headless ? { headless } : {}),
    ...(publishNotReadyAddresses ? { publishNotReadyAddresses } : {}),
  });
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

function endpointAddress(a: Field): EndpointAddress {
  a.object();
  const ip = a.get("ip").nonEmptyString();
  if (!IPV4.test(ip) && !/^[0-9a-fA-F:]+$/.test(ip)) a.get("ip").fail("an IPv4 or IPv6 address");
  const ref = a.get("targetRef");
  const targetRef = ref.present
    ? attempt(ref, (r) => {
        r.object();
        return Object.freeze({ kind: r.get("kind").nonEmptyString(), name: r.get("name").nonEmptyString(), namespace: r.get("namespace").optionalString() });
      })
    : undefined;
  return Object.freeze({ ip, hostname: a.get("hostname").optionalString(), targetRef });
}

/** `subsets[]` of an Endpoints document (`root`: the document itself). */
export function decodeEndpoints(root: Field): EndpointsSpec {
  const subsets = attemptEach(root.get("subsets"), (s): EndpointSubset => {
    s.object();
    const addresses = attemptEach(s.get("addresses"), endpointAddress);
    const notReadyAddresses = attemptEach(s.get("notReadyAddresses"), endpointAddress);
    const many = s.get("ports").list().length > 1;
    const ports = attemptEach(s.get("ports"), (p): EndpointPort => {
      p.object();
      // The orchestrator's rule, as for Service ports: several ports need names.
      if (many && !p.get("name").present) p.get("name").fail("a port name (required when a subset has more than one port)");
      return Object.freeze({
        name: p.get("name").optionalString(),
        port: port(p.get("port")),
        protocol: protocol(p.get("protocol")),
        appProtocol: p.get("appProtocol").optionalString(),
      });
    });
    return Object.freeze({ addresses: Object.freeze(addresses), notReadyAddresses: Object.freeze(notReadyAddresses), ports: Object.freeze(ports) });
  });
  return Object.freeze({ subsets: Object.freeze(subsets) });
}

export function decodeSecret(root: Field): SecretSpec {
  const type = root.get("type").optionalString() ?? "Opaque";
  const data: Record<string, string> = {};
  for (const [key, f] of root.get("data").entries()) {
    const v = f.string();
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v.replace(/\s/g, ""))) f.fail("base64 text");
    data[key] = Buffer.from(v, "base64").toString("utf8");
  }
  for (const [key, f] of root.get("stringData").entries()) data[key] = f.string();
  if (type === "kubernetes.io/tls") {
    for (const key of ["tls.crt", "tls.key"]) if (!data[key]) root.get("data").get(key).fail("a PEM value (type kubernetes.io/tls needs tls.crt and tls.key)");
  }
  return Object.freeze({ type, data: Object.freeze(data) });
}

export function decodeNamespace(): NamespaceSpec {
  return Object.freeze({});
}

function decodeContainer(c: Field): Container {
  c.object();
  const name = attempt(c.get("name"), (f) => {
    const s = f.nonEmptyString();
    if (!isDns1123Label(s)) f.fail("a DNS-1123 label");
    return s;
  });
  const ports = attemptEach(c.get("ports"), (p): ContainerPort => {
    p.object();
    const nameField = p.get("name");
    const portName = nameField.optionalString();
    if (portName !== undefined && !isIanaServiceName(portName))
      nameField.fail("a port name of up to 15 lower-case letters, digits and '-', with at least one letter");
    return Object.freeze({ containerPort: port(p.get("containerPort")), name: portName, protocol: protocol(p.get("protocol")) });
  });
  return Object.freeze({ name, image: c.get("image").optionalString(), ports: Object.freeze(ports), runAsUser: runAsUser(c) });
}

export function decodePodSpec(spec: Field): PodSpec {
  spec.object();
  const sa = spec.get("serviceAccountName");
  const serviceAccountName = sa.present
    ? attempt(sa, (f) => {
        const s = f.nonEmptyString();
        if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(s)) f.fail("a DNS-1123 subdomain");
        return s;
      })
    : "default";
  const containers = attemptEach(spec.get("containers"), decodeContainer, true);
  return Object.freeze({
    serviceAccountName,
    containers: Object.freeze(containers),
    nodeName: spec.get("nodeName").optionalString(),
    runAsUser: runAsUser(spec),
    ...(spec.get("hostNetwork").value === true ? { hostNetwork: true } : {}),
  });
}

/** `securityContext.runAsUser` of a pod or container (the orchestrator's integer user ID). */
function runAsUser(owner: Field): number | undefined {
  const f = owner.get("securityContext").get("runAsUser");
  return f.present ? attempt(f, (x) => x.integer(0, 2 ** 31 - 1)) : undefined;
}

function labelSelector(f: Field): LabelSelector {
  f.object();
  const matchLabels = attempt(f.get("matchLabels"), labelMap);
  const matchExpressions = attemptEach(f.get("matchExpressions"), (e): LabelSelectorRequirement => {
    e.object();
    const key = e.get("key").nonEmptyString();
    const operator = e.get("operator").enumOf(SELECTOR_OPERATORS);
    const values = Object.freeze(
      e
        .get("values")
        .list()
        .map((v) => v.string()),
    );
    if ((operator === "In" || operator === "NotIn") && values.length === 0) e.get("values").fail(`a non-empty list with operator ${operator}`);
    if ((operator === "Exists" || operator === "DoesNotExist") && values.length > 0) e.get("values").fail(`no values with operator ${operator}`);
    return Object.freeze({ key, operator, values });
  });
  if (noErrorsYet(f) && Object.keys(matchLabels).length === 0 && matchExpressions.length === 0)
    f.invalid("expected matchLabels or matchExpressions (an empty selector is refused by the orchestrator)");
  return Object.freeze({ matchLabels, matchExpressions: Object.freeze(matchExpressions) });
}

/** Whether a label set satisfies a selector (matchLabels and every expression). */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels)) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions) {
    const has = Object.hasOwn(labels, e.key);
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
    if (e.operator === "In" && (!has || !e.values.includes(labels[e.key]))) return false;
    if (e.operator === "NotIn" && has && e.values.includes(labels[e.key])) return false;
  }
  return true;
}

export function decodeDeployment(spec: Field): DeploymentSpec {
  spec.object();
  const replicas = attempt(spec.get("replicas"), (f) => f.integer(0, 2_147_483_647, 1));
  const selector = attempt(spec.get("selector"), (f) => {
    if (!f.present) f.fail("a label selector (matchLabels or matchExpressions)");
    return labelSelector(f);
  });
  const t = spec.get("template");
  const template = attempt(t, (tf): PodTemplate => {
    tf.object();
    const md = tf.get("metadata");
    const labels = attempt(md.get("labels"), labelMap);
    const annotations = attempt(md.get("annotations"), (f) => Object.freeze(f.stringMap()));
    const podSpec = attempt(tf.get("spec"), (f) => {
      if (!f.present) f.fail("a pod spec with containers");
      return decodePodSpec(f);
    });
    return Object.freeze({ labels, annotations, spec: podSpec });
  });
  // The orchestrator refuses a Deployment whose selector does not select its own pods.
  if (noErrorsYet(spec) && !selectorMatches(selector, template.labels)) {
    spec.get("selector").invalid("expected a selector that matches spec.template.metadata.labels");
  }
  return Object.freeze({ replicas, selector, template });
}
