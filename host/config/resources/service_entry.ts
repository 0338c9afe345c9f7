import type { Field } from "../decode.ts";
import { attempt, attemptEach, noErrorsYet } from "../problems.ts";
import { isIpOrCidr, labelMap, port, wildcardHost } from "./syntax.ts";
import { exportTo } from "./networking_fields.ts";

// The ServiceEntry resource of the networking API group (re-exported by networking.ts).

export const SERVICE_ENTRY_LOCATIONS = ["MESH_EXTERNAL", "MESH_INTERNAL"] as const;
export const SERVICE_ENTRY_RESOLUTIONS = ["NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN"] as const;
/** Upstream's port protocols (case-insensitive, stored upper case). */
export const SERVICE_PROTOCOLS = ["HTTP", "HTTPS", "GRPC", "GRPC-WEB", "HTTP2", "MONGO", "REDIS", "MYSQL", "THRIFT", "TCP", "TLS", "UDP"] as const;

export interface ServiceEntryPort {
  readonly number: number;
  readonly protocol: string;
  readonly name: string;
  readonly targetPort?: number;
}

export interface ServiceEntryEndpoint {
  readonly address: string;
  /** Port name → endpoint port. */
  readonly ports: Readonly<Record<string, number>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly serviceAccount?: string;
  readonly weight?: number;
}

export interface ServiceEntrySpec {
  readonly hosts: readonly string[];
  readonly addresses: readonly string[];
  readonly ports: readonly ServiceEntryPort[];
  readonly location: (typeof SERVICE_ENTRY_LOCATIONS)[number];
  readonly resolution: (typeof SERVICE_ENTRY_RESOLUTIONS)[number];
  readonly endpoints: readonly ServiceEntryEndpoint[];
  readonly workloadSelector?: Readonly<Record<string, string>>;
  readonly exportTo: readonly string[];
  readonly subjectAltNames: readonly string[];
}

/** A ServiceEntry (upstream's fields); short hosts are not resolved: upstream takes them as written. */
export function decodeServiceEntry(spec: Field): ServiceEntrySpec {
  spec.object();
  spec.allowOnly(["hosts", "addresses", "ports", "location", "resolution", "endpoints", "workloadSelector", "exportTo", "subjectAltNames"]);
  const hosts = attempt(spec.get("hosts"), (f) => Object.freeze(f.nonEmptyList().map((h) => wildcardHost(h, false).toLowerCase())));
  const addresses = attempt(spec.get("addresses"), (f) =>
    Object.freeze(
      f.list().map((a) => {
        const s = a.nonEmptyString();
        if (!isIpOrCidrText(s)) a.fail("an IP address or CIDR block");
        return s;
      }),
    ),
  );
  const names = new Set<string>();
  const ports = attemptEach(spec.get("ports"), (p): ServiceEntryPort => {
    p.object();
    p.allowOnly(["number", "protocol", "name", "targetPort"]);
    const name = p.get("name").nonEmptyString();
    if (names.has(name)) p.get("name").invalid(`duplicate port name ${JSON.stringify(name)}`);
    names.add(name);
    // Upstream accepts an empty protocol, as if absent (TCP).
    const protocol = p.get("protocol").present ? p.get("protocol").string().toUpperCase() || "TCP" : "TCP";
    if (!(SERVICE_PROTOCOLS as readonly string[]).includes(protocol)) p.get("protocol").fail(`one of ${SERVICE_PROTOCOLS.join(", ")}`);
    return Object.freeze({ number: port(p.get("number")), protocol, name, targetPort: p.get("targetPort").present ? port(p.get("targetPort")) : undefined });
  });
  const resolution = spec.get("resolution").enumOf(SERVICE_ENTRY_RESOLUTIONS, "NONE");
  const endpoints = attemptEach(spec.get("endpoints"), (e): ServiceEntryEndpoint => {
    e.object();
    e.allowOnly(["address", "ports", "labels", "network", "locality", "weight", "serviceAccount"]);
    const epPorts: Record<string, number> = {};
    for (const [k, v] of e.get("ports").entries()) epPorts[k] = port(v);
    return Object.freeze({
      address: e.get("address").nonEmptyString(),
      ports: Object.freeze(epPorts),
      labels: labelMap(e.get("labels")),
      serviceAccount: e.get("serviceAccount").optionalString(),
      weight: e.get("weight").present ? e.get("weight").integer(0, 2 ** 32 - 1) : undefined,
    });
  });
  if (noErrorsYet(spec) && resolution === "STATIC" && endpoints.length === 0 && !spec.get("workloadSelector").present) {
    spec.get("endpoints").invalid("expected endpoints (or a workloadSelector) with resolution STATIC");
  }
  // Upstream's rules for DNS: without endpoints the hosts themselves are resolved, so none may be a wildcard.
  if (noErrorsYet(spec) && (resolution === "DNS" || resolution === "DNS_ROUND_ROBIN") && endpoints.length === 0 && hosts?.some((h) => h.startsWith("*"))) {
    spec.get("hosts").invalid(`expected hosts without wildcards with resolution ${resolution} and no endpoints (the hosts themselves are resolved)`);
  }
  if (resolution === "DNS_ROUND_ROBIN" && endpoints.length > 1)
    spec.get("endpoints").warn("only the first endpoint is used with resolution DNS_ROUND_ROBIN (one name resolved, as Envoy's LOGICAL_DNS)");
  const ws = spec.get("workloadSelector");
  let workloadSelector: Readonly<Record<string, string>> | undefined;
  if (ws.present) {
    ws.object();
    ws.allowOnly(["labels"]);
    workloadSelector = attempt(ws.get("labels"), labelMap);
  }
  return Object.freeze({
    hosts,
    addresses,
    ports: Object.freeze(ports),
    location: spec.get("location").enumOf(SERVICE_ENTRY_LOCATIONS, "MESH_EXTERNAL"),
    resolution,
    endpoints: Object.freeze(endpoints),
    workloadSelector,
    exportTo: attempt(spec.get("exportTo"), exportTo),
    subjectAltNames: Object.freeze(
      spec
        .get("subjectAltNames")
        .list()
        .map((s) => s.nonEmptyString()),
    ),
  });
}

function isIpOrCidrText(s: string): boolean {
  return isIpOrCidr(s);
}
