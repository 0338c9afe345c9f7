import { isIP } from "node:net";
import type { Field } from "../decode.ts";
import { attempt, attemptEach } from "../problems.ts";
import { type EndpointPort, type PodSpec, decodePodSpec, protocol } from "./orch.ts";
import { port } from "./syntax.ts";

/**
 * What the orchestrator says about where a Service's pods are: a Pod's
 * status (its addresses, phase, readiness, whether it is being deleted) and
 * `discovery.k8s.io/v1` EndpointSlices. The registry (host/mesh/registry.ts)
 * turns them into a Service's endpoints by the endpoints controller's rules.
 * Status is the orchestrator's to write, so it is read leniently: a field of
 * the wrong shape is an error, a missing one means "not known yet".
 */

export const ENDPOINT_SLICE_API_VERSION = "discovery.k8s.io/v1";
/** The label tying an EndpointSlice to its Service (the orchestrator's own label, not renamed). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

export interface PodStatus {
  /** `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`; undefined when the document has no status. */
  readonly phase?: string;
  /** `status.podIPs[].ip`, else `status.podIP`: the first is the primary address. */
  readonly podIPs: readonly string[];
  /** The `Ready` condition is `True`. */
  readonly ready: boolean;
}

/** A Pod: its spec, what its status says, and whether it is being deleted (`metadata.deletionTimestamp`). */
export interface PodWithStatus extends PodSpec {
  readonly status: PodStatus;
  readonly deleting: boolean;
}

function ipAddress(f: Field): string {
  const ip = f.nonEmptyString();
  if (isIP(ip) === 0) f.fail("an IPv4 or IPv6 address");
  return ip;
}

/** A `v1` Pod document (`root`): spec, status and deletion mark. */
export function decodePod(root: Field, spec: Field): PodWithStatus {
  const podSpec = decodePodSpec(spec);
  const status = root.get("status");
  const ips: string[] = [];
  for (const item of attemptEach(status.get("podIPs"), (e) => ipAddress(e.get("ip")))) if (!ips.includes(item)) ips.push(item);
  const single = status.get("podIP");
  if (ips.length === 0 && single.present) {
    const ip = attempt(single, ipAddress);
    if (ip) ips.push(ip);
  }
  const conditions = attemptEach(status.get("conditions"), (c) => ({ type: c.get("type").string(), status: c.get("status").optionalString() }));
  return Object.freeze({
    ...podSpec,
    status: Object.freeze({
      phase: status.get("phase").optionalString(),
      podIPs: Object.freeze(ips),
      ready: conditions.some((c) => c.type === "Ready" && c.status === "True"),
    }),
    deleting: root.get("metadata").get("deletionTimestamp").present,
  });
}

export const ADDRESS_TYPES = ["IPv4", "IPv6", "FQDN"] as const;

export interface EndpointSliceEndpoint {
  readonly addresses: readonly string[];
  /** `conditions.ready`; absent means ready (the API's rule). */
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly hostname?: string;
  readonly nodeName?: string;
  readonly zone?: string;
  readonly targetRef?: { readonly kind: string; readonly name: string; readonly namespace?: string };
}

/** `discovery.k8s.io/v1` EndpointSlice (no `spec`: `addressType`, `endpoints`, `ports` are at the root). */
export interface EndpointSliceSpec {
  readonly addressType: (typeof ADDRESS_TYPES)[number];
  readonly endpoints: readonly EndpointSliceEndpoint[];
  /** Ports without a number (the API's "all ports") are left out: the mesh cannot route to them. */
  readonly ports: readonly EndpointPort[];
}

export function decodeEndpointSlice(root: Field): EndpointSliceSpec {
  const addressType = root.get("addressType").enumOf(ADDRESS_TYPES);
  const labels = root.get("metadata").get("labels");
  if (!labels.present || !labels.get(SERVICE_NAME_LABEL).present)
    labels.get(SERVICE_NAME_LABEL).warn("absent: the slice belongs to no Service, so the mesh does not read its endpoints");
  const endpoints = attemptEach(root.get("endpoints"), (e): EndpointSliceEndpoint => {
    e.object();
    const addresses = e
      .get("addresses")
      .nonEmptyList()
      .map((a) => (addressType === "FQDN" ? a.nonEmptyString() : ipAddress(a)));
    const c = e.get("conditions");
    const ref = e.get("targetRef");
    return Object.freeze({
      addresses: Object.freeze(addresses),
      ready: c.get("ready").bool(true),
      serving: c.get("serving").bool(c.get("ready").bool(true)),
      terminating: c.get("terminating").bool(false),
      hostname: e.get("hostname").optionalString(),
      nodeName: e.get("nodeName").optionalString(),
      zone: e.get("zone").optionalString(),
      targetRef: ref.present
        ? Object.freeze({ kind: ref.get("kind").nonEmptyString(), name: ref.get("name").nonEmptyString(), namespace: ref.get("namespace").optionalString() })
        : undefined,
    });
  });
  const ports = attemptEach(root.get("ports"), (p): EndpointPort | undefined => {
    p.object();
    if (!p.get("port").present) return undefined;
    return Object.freeze({
      name: p.get("name").optionalString() || undefined,
      port: port(p.get("port")),
      protocol: protocol(p.get("protocol")),
      appProtocol: p.get("appProtocol").optionalString(),
    });
  }).filter((p): p is EndpointPort => p !== undefined);
  return Object.freeze({ addressType, endpoints: Object.freeze(endpoints), ports: Object.freeze(ports) });
}
