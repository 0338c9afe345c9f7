import type { Catalog } from "../config/catalog.ts";
import { findDestinationRule } from "../mesh/destination_rules.ts";
import { endpointsOf } from "../mesh/endpoints.ts";
import type { MeshRegistry } from "../mesh/registry.ts";
import type { XdsService } from "./proxyless.ts";

/**
 * Every service port of the mesh with its endpoints and its DestinationRule
 * subsets, as the xDS builders take them; all of it answered by the mesh
 * model. Subsets come from the rule a client in the service's own namespace
 * would see (upstream builds subset clusters per rule the same way).
 */
export function xdsServices(registry: MeshRegistry, catalog: Catalog, rootNamespace: string): XdsService[] {
  const rules = catalog.byKind.DestinationRule;
  return registry.services.flatMap((service) =>
    service.ports.map((port) => {
      const rule = findDestinationRule(rules, service.fqdn, service.namespace, rootNamespace);
      return {
        host: service.fqdn,
        port: port.port,
        protocol: port.protocol,
        endpoints: endpointsOf(service, port),
        subsets: rule?.spec.subsets.map((s) => ({ name: s.name, labels: s.labels })) ?? [],
      };
    }),
  );
}
