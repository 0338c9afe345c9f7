import { isIPv6 } from "node:net";
import type { Resource } from "../config/catalog.ts";
import type { ServicePort } from "../config/resources/orch.ts";
import { SERVICE_NAME_LABEL } from "../config/resources/orch_endpoints.ts";
import { type Labels, hasLabels, labelsMatch } from "./labels.ts";

/**
 * Where a Service's pods are, as the orchestrator would publish it: from the
 * Service's `Endpoints` document when the configuration has one, else from
 * its EndpointSlices (label `kubernetes.io/service-name`), else computed from
 * the Pods its selector matches by the endpoints controller's rules (research
 * mesh-runtime §9): what the orchestrator would write when the configuration
 * is a set of YAML files and no controller runs. Pure.
 */

/** One address of a Service with the ports it serves (named as the Service's ports) and what the Pod behind it says about itself. */
export interface EndpointInstance {
  readonly address: string;
  readonly ports: readonly { readonly name?: string; readonly port: number }[];
  readonly labels: Labels;
  readonly serviceAccount?: string;
  /** `namespace/name` of the Pod behind the address, when known. */
  readonly pod?: string;
}

/** Which document the instances were read from; `none`: the Service has no selector (or is ExternalName) and no endpoint document. */
export type EndpointSource = "Endpoints" | "EndpointSlice" | "Pods" | "none";

export interface ServiceInstances {
  readonly source: EndpointSource;
  /** Ready addresses: the ones traffic goes to. */
  readonly ready: readonly EndpointInstance[];
  /** Addresses listed (or computed) as not ready: left out of load balancing. */
  readonly notReady: readonly EndpointInstance[];
}

type Pods = readonly Resource<"Pod">[];

const podKey = (namespace: string, name: string) => `${namespace}/${name}`;

function podIndex(pods: Pods): Map<string, Resource<"Pod">> {
  return new Map(pods.map((p) => [podKey(p.namespace, p.name), p]));
}

function instance(
  address: string,
  ports: EndpointInstance["ports"],
  ref: { kind: string; name: string; namespace?: string } | undefined,
  namespace: string,
  pods: ReadonlyMap<string, Resource<"Pod">>,
): EndpointInstance {
  const pod = ref?.kind === "Pod" ? pods.get(podKey(ref.namespace ?? namespace, ref.name)) : undefined;
  return Object.freeze({
    address,
    ports: Object.freeze(ports),
    labels: pod?.labels ?? Object.freeze({}),
    serviceAccount: pod?.spec.serviceAccountName,
    ...(ref?.kind === "Pod" ? { pod: podKey(ref.namespace ?? namespace, ref.name) } : {}),
  });
}

/** The addresses of an `Endpoints` document; a `targetRef` Pod of the configuration lends its labels and service account. */
export function instancesFromEndpoints(doc: Resource<"Endpoints">, pods: Pods): ServiceInstances {
  const index = podIndex(pods);
  const read = (which: "addresses" | "notReadyAddresses") =>
    doc.spec.subsets.flatMap((subset) =>
      subset[which].map((a) =>
        instance(
          a.ip,
          subset.ports.map((p) => ({ name: p.name, port: p.port })),
          a.targetRef,
          doc.namespace,
          index,
        ),
      ),
    );
  return Object.freeze({ source: "Endpoints", ready: Object.freeze(read("addresses")), notReady: Object.freeze(read("notReadyAddresses")) });
}

/** The EndpointSlices of one Service (by their service-name label, in its namespace). */
export function slicesOfService(slices: readonly Resource<"EndpointSlice">[], service: { name: string; namespace: string }): Resource<"EndpointSlice">[] {
  return slices.filter((s) => s.namespace === service.namespace && s.labels[SERVICE_NAME_LABEL] === service.name);
}

/**
 * The addresses of a Service's EndpointSlices, one instance per address with
 * the ports of every slice listing it (the orchestrator splits slices by
 * port set). `conditions.ready` absent counts as ready; FQDN slices are not
 * read (as upstream).
 */
export function instancesFromSlices(slices: readonly Resource<"EndpointSlice">[], pods: Pods): ServiceInstances {
  const index = podIndex(pods);
  const ready = new Map<string, EndpointInstance>();
  const notReady = new Map<string, EndpointInstance>();
  for (const slice of slices) {
    if (slice.spec.addressType === "FQDN") continue;
    const ports = slice.spec.ports.map((p) => ({ name: p.name, port: p.port }));
    for (const e of slice.spec.endpoints) {
      const into = e.ready ? ready : notReady;
      for (const address of e.addresses) {
        const earlier = into.get(address);
        const found = instance(address, [...(earlier?.ports ?? []), ...ports], e.targetRef, slice.namespace, index);
        into.set(address, earlier ? Object.freeze({ ...earlier, ports: found.ports }) : found);
      }
    }
  }
  return Object.freeze({ source: "EndpointSlice", ready: Object.freeze([...ready.values()]), notReady: Object.freeze([...notReady.values()]) });
}

/** `ShouldPodBeInEndpoints`: not terminal, has an address, not being deleted (unless the Service publishes not-ready addresses). */
export function podMayServe(pod: Resource<"Pod">, includeTerminating: boolean): boolean {
  const { phase, podIPs } = pod.spec.status;
  if (phase === "Succeeded" || phase === "Failed") return false;
  if (podIPs.length === 0) return false;
  return includeTerminating || !pod.spec.deleting;
}

/**
 * `FindPort`: a numeric targetPort as is; a named one is the container port
 * of that name and the service port's protocol; undefined when no container
 * has it (the pod is then left out for that port).
 */
export function findPort(pod: Pick<Resource<"Pod">, "spec">, port: Pick<ServicePort, "targetPort" | "protocol">): number | undefined {
  if (typeof port.targetPort === "number") return port.targetPort;
  for (const c of pod.spec.containers) {
    for (const p of c.ports) if (p.name === port.targetPort && p.protocol === port.protocol) return p.containerPort;
  }
  return undefined;
}

/** The pod's address in the Service's IP family (its first cluster IP's; the pod's primary address for a Service without one). */
function podAddress(pod: Resource<"Pod">, service: Resource<"Service">): string | undefined {
  const ips = pod.spec.status.podIPs;
  const first = service.spec.addresses[0];
  if (first === undefined) return ips[0];
  return ips.find((ip) => isIPv6(ip) === isIPv6(first));
}

/**
 * What the endpoints controller would write for a Service: nothing for an
 * ExternalName Service or one without selector; else every Pod of its
 * namespace the selector matches that may serve (podMayServe), at its
 * address, with each service port its targetPort resolves on the pod (a pod
 * resolving none is left out); ready when its Ready condition is True or the
 * Service sets `publishNotReadyAddresses`.
 */
export function instancesFromPods(service: Resource<"Service">, pods: Pods): ServiceInstances {
  const none: ServiceInstances = Object.freeze({ source: "none", ready: Object.freeze([]), notReady: Object.freeze([]) });
  const selector = service.spec.selector;
  if (service.spec.type === "ExternalName" || !hasLabels(selector)) return none;
  const publish = service.spec.publishNotReadyAddresses === true;
  const ready: EndpointInstance[] = [];
  const notReady: EndpointInstance[] = [];
  for (const pod of pods) {
    if (pod.namespace !== service.namespace || !labelsMatch(selector, pod.labels) || !podMayServe(pod, publish)) continue;
    const address = podAddress(pod, service);
    if (address === undefined) continue;
    const ports = service.spec.ports.flatMap((p) => {
      const n = findPort(pod, p);
      return n === undefined ? [] : [{ name: p.name, port: n }];
    });
    if (service.spec.ports.length > 0 && ports.length === 0) continue;
    const found = Object.freeze({
      address,
      ports: Object.freeze(ports),
      labels: pod.labels,
      serviceAccount: pod.spec.serviceAccountName,
      pod: podKey(pod.namespace, pod.name),
    });
    (pod.spec.status.ready || publish ? ready : notReady).push(found);
  }
  return Object.freeze({ source: "Pods", ready: Object.freeze(ready), notReady: Object.freeze(notReady) });
}

/** Where a Service's instances come from: its Endpoints document, else its EndpointSlices, else its Pods. */
export function serviceInstances(
  service: Resource<"Service">,
  byKind: { readonly Endpoints?: readonly Resource<"Endpoints">[]; readonly EndpointSlice?: readonly Resource<"EndpointSlice">[]; readonly Pod: Pods },
): ServiceInstances {
  const doc = (byKind.Endpoints ?? []).find((e) => e.name === service.name && e.namespace === service.namespace);
  if (doc) return instancesFromEndpoints(doc, byKind.Pod);
  const slices = slicesOfService(byKind.EndpointSlice ?? [], service);
  if (slices.length > 0) return instancesFromSlices(slices, byKind.Pod);
  return instancesFromPods(service, byKind.Pod);
}
