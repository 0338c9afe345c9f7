import type { Analyzer } from "./analyzer.ts";
import { annotationsAnalyzer } from "./analyzers/annotations.ts";
import { authzProviderAnalyzer } from "./analyzers/authz_provider.ts";
import { bindingReferencesAnalyzer } from "./analyzers/binding_references.ts";
import { conflictingGatewaysAnalyzer } from "./analyzers/conflicting_gateways.ts";
import { conflictingMeshHostsAnalyzer } from "./analyzers/conflicting_mesh_hosts.ts";
import { deprecationAnalyzer } from "./analyzers/deprecation.ts";
import { destinationLabelsAnalyzer } from "./analyzers/destination_labels.ts";
import { destinationRuleHostAnalyzer } from "./analyzers/destination_rule_host.ts";
import { destinationRuleSubsetsAnalyzer } from "./analyzers/destination_rule_subsets.ts";
import { destinationRuleTlsAnalyzer } from "./analyzers/destination_rule_tls.ts";
import { gatewayCertificateAnalyzer, gatewaySecretAnalyzer } from "./analyzers/gateway_credentials.ts";
import { gatewayPolicyNamespaceAnalyzer } from "./analyzers/gateway_policy_namespace.ts";
import { gatewayPortAnalyzer } from "./analyzers/gateway_port.ts";
import { gatewaySelectorAnalyzer } from "./analyzers/gateway_selector.ts";
import { ingressRouteRulesAnalyzer } from "./analyzers/ingress_route_rules.ts";
import { injectionAnalyzer } from "./analyzers/injection.ts";
import { jwtClaimRouteAnalyzer } from "./analyzers/jwt_claim_route.ts";
import { namespaceReferencesAnalyzer } from "./analyzers/namespace_references.ts";
import { peerAuthnDestinationRuleAnalyzer } from "./analyzers/peer_authn_destination_rule.ts";
import { peerAuthnRootSelectorAnalyzer } from "./analyzers/peer_authn_root_selector.ts";
import { portLevelMtlsAnalyzer } from "./analyzers/port_level_mtls.ts";
import { portNameAnalyzer } from "./analyzers/port_name.ts";
import { regexAnalyzer } from "./analyzers/regex.ts";
import { schemaAnalyzer } from "./analyzers/schema.ts";
import { serviceEntryAddressesAnalyzer, serviceEntryProtocolsAnalyzer } from "./analyzers/service_entries.ts";
import { specBindingOverlapAnalyzer } from "./analyzers/spec_binding_overlap.ts";
import { virtualServiceDestinationsAnalyzer } from "./analyzers/virtual_service_destinations.ts";
import { virtualServiceGatewayHostsAnalyzer } from "./analyzers/virtual_service_gateway_hosts.ts";
import { virtualServiceGatewaysAnalyzer } from "./analyzers/virtual_service_gateways.ts";
import { virtualServiceRulesAnalyzer } from "./analyzers/virtual_service_rules.ts";
import { workloadSelectorAnalyzer } from "./analyzers/workload_selector.ts";
import { applicationUidAnalyzer, serviceAssociationAnalyzer } from "./analyzers/workloads.ts";
import { OWN_CODE_RANGE, isOwnCode } from "./messages.ts";

/** Every analyzer `meshctl analyze` runs, in the order `-L` lists them: upstream's first, then this mesh's own. Add a new one here. */
export const ANALYZERS: readonly Analyzer[] = Object.freeze([
  schemaAnalyzer,
  regexAnalyzer,
  annotationsAnalyzer,
  deprecationAnalyzer,
  injectionAnalyzer,
  applicationUidAnalyzer,
  serviceAssociationAnalyzer,
  destinationRuleHostAnalyzer,
  destinationRuleSubsetsAnalyzer,
  destinationRuleTlsAnalyzer,
  gatewaySelectorAnalyzer,
  gatewayPortAnalyzer,
  conflictingGatewaysAnalyzer,
  gatewayCertificateAnalyzer,
  gatewaySecretAnalyzer,
  portNameAnalyzer,
  serviceEntryAddressesAnalyzer,
  serviceEntryProtocolsAnalyzer,
  workloadSelectorAnalyzer,
  namespaceReferencesAnalyzer,
  virtualServiceGatewaysAnalyzer,
  virtualServiceGatewayHostsAnalyzer,
  virtualServiceDestinationsAnalyzer,
  ingressRouteRulesAnalyzer,
  conflictingMeshHostsAnalyzer,
  virtualServiceRulesAnalyzer,
  jwtClaimRouteAnalyzer,
  authzProviderAnalyzer,
  bindingReferencesAnalyzer,
  destinationLabelsAnalyzer,
  peerAuthnDestinationRuleAnalyzer,
  portLevelMtlsAnalyzer,
  peerAuthnRootSelectorAnalyzer,
  gatewayPolicyNamespaceAnalyzer,
  specBindingOverlapAnalyzer,
]);

/** What `-L` prints: one block per analyzer (with upstream's analyzer when there is one) and its codes with their severities. */
export function formatAnalyzerList(analyzers: readonly Analyzer[] = ANALYZERS): string {
  const lines = [
    "Available analyzers:",
    `(codes are upstream's IST numbers as MSH; ${OWN_CODE_RANGE.first}-${OWN_CODE_RANGE.last} are this mesh's own checks, marked "own")`,
  ];
  for (const a of analyzers) {
    lines.push(`\t${a.name}: ${a.description}${a.upstream ? ` [upstream ${a.upstream}]` : ""}`);
    const needs =
      a.needs.length > 0 ? ` (runs when the input has ${a.needs.map((n) => (n === "Workload" ? "Pod or Deployment" : n)).join(" and ")} documents)` : "";
    if (needs) lines.push(`\t\t${needs.trim()}`);
    for (const t of a.codes) lines.push(`\t\t${t.code} ${t.level} ${t.name}${isOwnCode(t.code) ? " (own)" : ""}: ${t.description}`);
  }
  return `${lines.join("\n")}\n`;
}
