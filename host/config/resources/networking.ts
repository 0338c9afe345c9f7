/**
 * The networking resources (spec 1): DestinationRule, Gateway, VirtualService
 * and ServiceEntry, one file each (re-exported here).
 * As upstream, `networking.mesh.io` serves `v1alpha3`, `v1beta1` and `v1`
 * with one schema: a document may carry any of them.
 */
export const NETWORKING_API_VERSION = "networking.mesh.io/v1alpha3";
export const NETWORKING_API_VERSIONS = Object.freeze(["networking.mesh.io/v1alpha3", "networking.mesh.io/v1beta1", "networking.mesh.io/v1"]);

export * from "./destination_rule.ts";
export * from "./gateway.ts";
export * from "./virtual_service.ts";
export * from "./service_entry.ts";
