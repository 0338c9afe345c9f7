import type { Resource } from "../../config/catalog.ts";
import type { ClientTlsMode, ClientTlsSettings } from "../../config/resources/networking.ts";
import { destinationFor, findDestinationRule as findRule, tlsForPort } from "../../mesh/destination_rules.ts";
import { serviceNamespace } from "../../mesh/hosts.ts";
import type { MeshRegistry } from "../../mesh/registry.ts";
import { DEFAULT_ROOT_NAMESPACE, policyName } from "../workload.ts";
import { type ServerMtlsMode, namespaceMtls } from "./peer_authn.ts";

/**
 * Client-side TLS for a call to a service host and service port (spec rules
 * 1–2, 5–7; security.md §2). A DestinationRule's `tls` (port level first,
 * keyed by service port, replacing the host level for that port) wins;
 * without one, auto mutual TLS: mutual TLS with the mesh certificate when
 * the destination has a sidecar and its mesh/namespace mode is not DISABLE,
 * plain text otherwise, and always for a service outside the mesh (a
 * ServiceEntry `MESH_EXTERNAL`). As in the spec's era, auto mutual TLS does not look
 * at workload- or port-level PeerAuthentication: a workload DISABLE needs a
 * DestinationRule DISABLE (rule 5).
 */

export type ClientTlsSource =
  /** `trafficPolicy.portLevelSettings[]` for the service port. */
  | "port-level"
  /** `trafficPolicy.tls`. */
  | "destination-rule"
  /** No TLS setting: auto mutual TLS decided. */
  | "auto-mtls";

export interface ClientTls {
  /** DISABLE = plain text; MESH_MUTUAL = mutual TLS with the mesh certificate. */
  readonly mode: ClientTlsMode;
  readonly source: ClientTlsSource;
  /** `ns/name` of the DestinationRule consulted, if any. */
  readonly destinationRule: string | null;
  /** The TLS settings that decided (SIMPLE/MUTUAL need them); undefined under auto mutual TLS. */
  readonly settings?: ClientTlsSettings;
  /** Why auto mutual TLS chose plain text: `auto_mtls_off`, `mesh_external`, `no_sidecar` or `destination_disable`. */
  readonly plainTextReason?: "auto_mtls_off" | "mesh_external" | "no_sidecar" | "destination_disable";
}

export interface ClientTlsInput {
  /** Destination service FQDN (`<svc>.<ns>.svc.cluster.local`) or external host. */
  readonly host: string;
  readonly servicePort: number;
  /** Namespace of the calling workload (DestinationRule lookup starts there). */
  readonly clientNamespace: string;
  readonly destinationRules: readonly Resource<"DestinationRule">[];
  /** Whether the destination endpoints run a sidecar. */
  readonly destinationHasSidecar: boolean;
  /** The destination service's mesh/namespace-level mode (peer_authn.ts `namespaceMtls`); default PERMISSIVE. */
  readonly destinationNamespaceMode?: ServerMtlsMode;
  /** The destination is a ServiceEntry `location: MESH_EXTERNAL`: no auto mutual TLS (upstream). */
  readonly destinationExternal?: boolean;
  /** Mesh `enableAutoMtls`; default true. */
  readonly enableAutoMtls?: boolean;
  readonly rootNamespace?: string;
  /** The route's subset: its traffic policy replaces the rule's (upstream). */
  readonly subset?: string;
}

/**
 * The DestinationRule for a host as seen from a client namespace: the mesh
 * model's lookup (host/mesh/destination_rules.ts).
 */
export function findDestinationRule(
  rules: readonly Resource<"DestinationRule">[],
  host: string,
  clientNamespace: string,
  rootNamespace = DEFAULT_ROOT_NAMESPACE,
): Resource<"DestinationRule"> | undefined {
  return findRule(rules, host, clientNamespace, rootNamespace);
}

/**
 * @example
 * const tls = clientTls({ host: "httpbin.foo.svc.cluster.local", servicePort: 8000, clientNamespace: "bar",
 *   destinationRules: catalog.byKind.DestinationRule, destinationHasSidecar: true });
 * tls.mode; // "MESH_MUTUAL"
 */
export function clientTls(input: ClientTlsInput): ClientTls {
  const applied = destinationFor(
    input.destinationRules,
    input.host,
    input.servicePort,
    input.subset,
    input.clientNamespace,
    input.rootNamespace ?? DEFAULT_ROOT_NAMESPACE,
  );
  const dr = applied.rule;
  const name = dr ? policyName(dr) : null;
  const tp = applied.trafficPolicy;
  const { tls: settings, portLevelIndex } = tlsForPort(tp, input.servicePort);
  if (settings) {
    return Object.freeze({ mode: settings.mode, source: portLevelIndex >= 0 ? "port-level" : "destination-rule", destinationRule: name, settings });
  }
  const plain = (plainTextReason: NonNullable<ClientTls["plainTextReason"]>): ClientTls =>
    Object.freeze({ mode: "DISABLE", source: "auto-mtls", destinationRule: name, plainTextReason });
  if (input.enableAutoMtls === false) return plain("auto_mtls_off");
  if (input.destinationExternal) return plain("mesh_external");
  if (!input.destinationHasSidecar) return plain("no_sidecar");
  if (input.destinationNamespaceMode === "DISABLE") return plain("destination_disable");
  return Object.freeze({ mode: "MESH_MUTUAL", source: "auto-mtls", destinationRule: name });
}

/** What auto mutual TLS knows of a destination host besides its endpoints (ClientTlsInput's `destination*` fields). */
export interface AutoMtlsFacts {
  readonly destinationNamespaceMode?: ServerMtlsMode;
  readonly destinationExternal: boolean;
}

/**
 * The destination facts auto mutual TLS reads, from the mesh model: the
 * mesh/namespace-level PeerAuthentication mode of the namespace the host's
 * service lives in (a ServiceEntry's own namespace; a service host's
 * `<svc>.<ns>.svc.<domain>`; none for another external name), and whether a
 * ServiceEntry places it outside the mesh. The Node sidecar and the Envoy
 * clusters disco-discovery serves ask this same question.
 */
export function autoMtlsFacts(
  registry: Pick<MeshRegistry, "services">,
  peerAuthentications: readonly Resource<"PeerAuthentication">[],
  host: string,
  rootNamespace: string,
): AutoMtlsFacts {
  const service = registry.services.find((s) => s.fqdn === host);
  const entry = service?.source === "ServiceEntry";
  const namespace = entry ? service.namespace : serviceNamespace(host);
  return {
    ...(namespace !== undefined ? { destinationNamespaceMode: namespaceMtls(peerAuthentications, namespace, rootNamespace).mode } : {}),
    destinationExternal: entry && service.external,
  };
}
