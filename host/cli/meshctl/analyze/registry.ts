import type { Analyzer } from "./analyzer.ts";
import { authzProviderAnalyzer } from "./analyzers/authz_provider.ts";
import { bindingReferencesAnalyzer } from "./analyzers/binding_references.ts";
import { destinationLabelsAnalyzer } from "./analyzers/destination_labels.ts";
import { destinationRuleHostAnalyzer } from "./analyzers/destination_rule_host.ts";
import { gatewayPolicyNamespaceAnalyzer } from "./analyzers/gateway_policy_namespace.ts";
import { gatewaySelectorAnalyzer } from "./analyzers/gateway_selector.ts";
import { namespaceInjectionAnalyzer } from "./analyzers/namespace_injection.ts";
import { namespaceReferencesAnalyzer } from "./analyzers/namespace_references.ts";
import { peerAuthnDestinationRuleAnalyzer } from "./analyzers/peer_authn_destination_rule.ts";
import { peerAuthnRootSelectorAnalyzer } from "./analyzers/peer_authn_root_selector.ts";
import { portLevelMtlsAnalyzer } from "./analyzers/port_level_mtls.ts";
import { regexAnalyzer } from "./analyzers/regex.ts";
import { schemaAnalyzer } from "./analyzers/schema.ts";
import { specBindingOverlapAnalyzer } from "./analyzers/spec_binding_overlap.ts";
import { virtualServiceDestinationsAnalyzer } from "./analyzers/virtual_service_destinations.ts";
import { virtualServiceGatewaysAnalyzer } from "./analyzers/virtual_service_gateways.ts";
import { workloadSelectorAnalyzer } from "./analyzers/workload_selector.ts";
import { conflictingGatewaysAnalyzer } from "./analyzers/conflicting_gateways.ts";
import { conflictingMeshHostsAnalyzer } from "./analyzers/conflicting_mesh_hosts.ts";
import { destinationRuleSubsetsAnalyzer } from "./analyzers/destination_rule_subsets.ts";
import { destinationRuleTlsAnalyzer } from "./analyzers/destination_rule_tls.ts";
import { gatewayPortAnalyzer } from "./analyzers/gateway_port.ts";
import { portNameAnalyzer } from "./analyzers/port_name.ts";
import { virtualServiceGatewayHostsAnalyzer } from "./analyzers/virtual_service_gateway_hosts.ts";

/** Every analyzer `meshctl analyze` runs, in the order `-L` lists them. Add a new one here. */
export const ANALYZERS: readonly Analyzer[] = Object.freeze([
  schemaAnalyzer,
  regexAnalyzer,
  destinationLabelsAnalyzer,
  peerAuthnDestinationRuleAnalyzer,
  portLevelMtlsAnalyzer,
  peerAuthnRootSelectorAnalyzer,
  workloadSelectorAnalyzer,
  authzProviderAnalyzer,
  gatewayPolicyNamespaceAnalyzer,
  gatewaySelectorAnalyzer,
  destinationRuleHostAnalyzer,
  virtualServiceGatewaysAnalyzer,
  virtualServiceDestinationsAnalyzer,
  bindingReferencesAnalyzer,
  specBindingOverlapAnalyzer,
  namespaceReferencesAnalyzer,
  namespaceInjectionAnalyzer,
  gatewayPortAnalyzer,
  conflictingGatewaysAnalyzer,
  virtualServiceGatewayHostsAnalyzer,
  conflictingMeshHostsAnalyzer,
  destinationRuleSubsetsAnalyzer,
  destinationRuleTlsAnalyzer,
  portNameAnalyzer,
]);

/** What `-L` prints: one block per analyzer with its codes and their severities. */
export function formatAnalyzerList(analyzers: readonly Analyzer[] = ANALYZERS): string {
  const lines = ["Available analyzers:"];
  for (const a of analyzers) {
    lines.push(`\t${a.name}: ${a.description}`);
    const needs = a.needs.length > 0 ? ` (runs when the input has ${a.needs.map((n) => (n === "Workload" ? "Pod or Deployment" : n)).join(" and ")} documents)` : "";
    if (needs) lines.push(`\t\t${needs.trim()}`);
    for (const t of a.codes) lines.push(`\t\t${t.code} ${t.level} ${t.name}: ${t.description}`);
  }
  return `${lines.join("\n")}\n`;
}
