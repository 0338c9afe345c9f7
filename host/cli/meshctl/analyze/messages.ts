import type { Level } from "./levels.ts";

/**
 * Every message code `meshctl analyze` prints, with its fixed severity.
 * Codes are stable: a code is never reused for another meaning. Where
 * upstream's analyzer has the same check, the number is upstream's (IST0101 →
 * MSH0101, …); checks of this mesh only are numbered from MSH0200.
 */
export interface MessageType {
  readonly code: string;
  /** CamelCase name, as in upstream's message list. */
  readonly name: string;
  readonly level: Level;
  readonly description: string;
}

function type(code: string, name: string, level: Level, description: string): MessageType {
  return Object.freeze({ code, name, level, description });
}

export const InternalError = type("MSH0001", "InternalError", "Error", "An analyzer failed; this is a bug in meshctl");
export const ReferencedResourceNotFound = type("MSH0101", "ReferencedResourceNotFound", "Error", "A resource being referenced does not exist");
export const NamespaceNotInjected = type("MSH0102", "NamespaceNotInjected", "Info", "A namespace is not labelled for sidecar injection");
export const SchemaValidationError = type("MSH0106", "SchemaValidationError", "Error", "The resource has a schema validation error and is refused");
export const VirtualServiceDestinationPortSelectorRequired = type(
  "MSH0112",
  "VirtualServiceDestinationPortSelectorRequired",
  "Error",
  "A gateway VirtualService routes to a service with more than one port without naming the port",
);
export const MtlsPolicyConflict = type("MSH0113", "MTLSPolicyConflict", "Error", "A DestinationRule and a PeerAuthentication disagree about mutual TLS for the same service port");
export const InvalidRegexp = type("MSH0122", "InvalidRegexp", "Error", "A regular expression that the filter's linear-time engine refuses; the configuration is refused");
export const NoMatchingWorkloadsFound = type("MSH0127", "NoMatchingWorkloadsFound", "Warning", "A policy selector matches no workload");
export const SchemaWarning = type("MSH0133", "SchemaWarning", "Warning", "The resource is accepted with a schema warning (unknown field, ignored value)");
export const StrictWorkloadNeedsDestinationRule = type(
  "MSH0201",
  "StrictWorkloadNeedsDestinationRule",
  "Warning",
  "A STRICT PeerAuthentication the clients cannot infer has no DestinationRule with tls mode MESH_MUTUAL for the services of its workloads (spec 1, rule 5)",
);
export const DisabledWorkloadNeedsDestinationRule = type(
  "MSH0202",
  "DisabledWorkloadNeedsDestinationRule",
  "Error",
  "A workload PeerAuthentication DISABLE under a namespace or mesh that is not DISABLE has no DestinationRule with tls mode DISABLE: proxied clients send mutual TLS (spec 1, rule 7)",
);
export const PortLevelMtlsPortNotBound = type(
  "MSH0203",
  "PortLevelMtlsPortNotBound",
  "Warning",
  "A portLevelMtls entry names a container port no Service targets: it is ignored (spec 1, rule 6)",
);
export const DestinationRuleHostNotFound = type("MSH0204", "DestinationRuleHostNotFound", "Warning", "A DestinationRule host matches no known service: the rule applies to nothing");
export const GatewayPolicyOutsideRootNamespace = type(
  "MSH0205",
  "GatewayPolicyOutsideRootNamespace",
  "Error",
  "A policy selects the ingress gateway's labels outside the root namespace, so it applies to nothing",
);
export const PeerAuthenticationSelectorInRootNamespace = type(
  "MSH0206",
  "PeerAuthenticationSelectorInRootNamespace",
  "Warning",
  "A PeerAuthentication with a selector in the root namespace is ignored",
);
export const OverlappingApiSpecBindings = type(
  "MSH0210",
  "OverlappingHTTPAPISpecBindings",
  "Error",
  "Two HTTPAPISpecs bound to the same service have patterns that match the same request (the spec forbids overlap)",
);
export const OverlappingQuotaSpecBindings = type(
  "MSH0211",
  "OverlappingQuotaSpecBindings",
  "Error",
  "Two QuotaSpecs bound to the same service have rules that match the same request (the spec forbids overlap)",
);
export const VirtualServiceDestinationLabels = type(
  "MSH0220",
  "VirtualServiceDestinationLabels",
  "Error",
  "MeshService labels on a VirtualService destination (they must be empty there); the VirtualService is refused",
);
export const GatewayPortNotOnWorkload = type("MSH0104", "GatewayPortNotOnWorkload", "Warning", "A Gateway server port is not a port of the Service of the gateway workloads it selects: nothing listens for it");
export const ConflictingMeshGatewayVirtualServiceHosts = type("MSH0109", "ConflictingMeshGatewayVirtualServiceHosts", "Error", "Several VirtualServices bound to the mesh gateway name the same host: only one of them is used");
export const PortNameIsNotUnderNamingConvention = type("MSH0118", "PortNameIsNotUnderNamingConvention", "Info", "A Service port name does not follow <protocol>[-<suffix>] and has no appProtocol: its protocol is not known");
export const NoServerCertificateVerificationDestinationLevel = type("MSH0128", "NoServerCertificateVerificationDestinationLevel", "Error", "A DestinationRule originates TLS (SIMPLE or MUTUAL) without caCertificates: the server certificate is not verified");
export const NoServerCertificateVerificationPortLevel = type("MSH0129", "NoServerCertificateVerificationPortLevel", "Warning", "A DestinationRule port-level setting originates TLS without caCertificates: the server certificate is not verified");
export const VirtualServiceHostNotFoundInGateway = type("MSH0132", "VirtualServiceHostNotFoundInGateway", "Warning", "A VirtualService host is not among the hosts of a Gateway it is bound to: that Gateway does not route it");
export const ConflictingGateways = type("MSH0145", "ConflictingGateways", "Error", "Gateways selecting the same workloads define the same port and host: one of them is ignored");
export const DestinationRuleSubsetNoPods = type("MSH0230", "DestinationRuleSubsetNoPods", "Warning", "A DestinationRule subset's labels select no workload of the service: routes to it get no healthy upstream (503)");

export const ALL_MESSAGE_TYPES: readonly MessageType[] = Object.freeze([
  InternalError,
  ReferencedResourceNotFound,
  NamespaceNotInjected,
  SchemaValidationError,
  VirtualServiceDestinationPortSelectorRequired,
  MtlsPolicyConflict,
  InvalidRegexp,
  NoMatchingWorkloadsFound,
  SchemaWarning,
  StrictWorkloadNeedsDestinationRule,
  DisabledWorkloadNeedsDestinationRule,
  PortLevelMtlsPortNotBound,
  DestinationRuleHostNotFound,
  GatewayPolicyOutsideRootNamespace,
  PeerAuthenticationSelectorInRootNamespace,
  OverlappingApiSpecBindings,
  OverlappingQuotaSpecBindings,
  VirtualServiceDestinationLabels,
  GatewayPortNotOnWorkload,
  ConflictingMeshGatewayVirtualServiceHosts,
  PortNameIsNotUnderNamingConvention,
  NoServerCertificateVerificationDestinationLevel,
  NoServerCertificateVerificationPortLevel,
  VirtualServiceHostNotFoundInGateway,
  ConflictingGateways,
  DestinationRuleSubsetNoPods,
]);

export function messageTypeByCode(code: string): MessageType | undefined {
  return ALL_MESSAGE_TYPES.find((t) => t.code === code);
}
