import type { Level } from "./levels.ts";

/**
 * Every message code `meshctl analyze` prints, with its fixed severity.
 * Codes are stable: a code is never reused for another meaning. Where
 * upstream's analyzer has the same message, the name, level and number are
 * upstream's (IST0101 → MSH0101, …); checks of this mesh only are numbered in
 * OWN_CODE_RANGE, which upstream's list (IST0001–IST0177 today) does not use.
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
export const Deprecated = type("MSH0002", "Deprecated", "Warning", "A deprecated field or value is used");
export const ReferencedResourceNotFound = type("MSH0101", "ReferencedResourceNotFound", "Error", "A resource being referenced does not exist");
export const NamespaceNotInjected = type("MSH0102", "NamespaceNotInjected", "Info", "A namespace is not labelled for sidecar injection");
export const PodMissingProxy = type("MSH0103", "PodMissingProxy", "Warning", "A pod of a namespace labelled for injection runs without the sidecar proxy");
export const SchemaValidationError = type("MSH0106", "SchemaValidationError", "Error", "The resource has a schema validation error and is refused");
export const MisplacedAnnotation = type("MSH0107", "MisplacedAnnotation", "Warning", "A mesh annotation on a kind of resource it does not apply to");
export const UnknownAnnotation = type("MSH0108", "UnknownAnnotation", "Warning", "An annotation of a mesh domain (*.mesh.io) that the mesh does not know");
export const ConflictingMeshGatewayVirtualServiceHosts = type(
  "MSH0109",
  "ConflictingMeshGatewayVirtualServiceHosts",
  "Error",
  "Several VirtualServices bound to the mesh gateway and visible in the same namespace name the same host: only one of them is used",
);
export const VirtualServiceDestinationPortSelectorRequired = type(
  "MSH0112",
  "VirtualServiceDestinationPortSelectorRequired",
  "Error",
  "A VirtualService routes to a service with more than one port without naming the port",
);
export const MtlsPolicyConflict = type(
  "MSH0113",
  "MTLSPolicyConflict",
  "Error",
  "A DestinationRule and a PeerAuthentication disagree about mutual TLS for the same service port",
);
export const DeploymentAssociatedToMultipleServices = type(
  "MSH0116",
  "DeploymentAssociatedToMultipleServices",
  "Warning",
  "A deployment's pods are selected by several Services using the same port with different protocols",
);
export const PortNameIsNotUnderNamingConvention = type(
  "MSH0118",
  "PortNameIsNotUnderNamingConvention",
  "Info",
  "A Service port name does not follow <protocol>[-<suffix>] and has no appProtocol: its protocol is not known",
);
export const InvalidRegexp = type(
  "MSH0122",
  "InvalidRegexp",
  "Error",
  "A regular expression that the filter's linear-time engine refuses; the configuration is refused",
);
export const NamespaceMultipleInjectionLabels = type(
  "MSH0123",
  "NamespaceMultipleInjectionLabels",
  "Warning",
  "A namespace carries both the mesh-injection label and a mesh.io/rev revision label",
);
export const InvalidAnnotation = type("MSH0125", "InvalidAnnotation", "Warning", "A mesh annotation whose value is not one it takes");
export const NoMatchingWorkloadsFound = type("MSH0127", "NoMatchingWorkloadsFound", "Warning", "A policy selector matches no workload");
export const NoServerCertificateVerificationDestinationLevel = type(
  "MSH0128",
  "NoServerCertificateVerificationDestinationLevel",
  "Warning",
  "A DestinationRule originates TLS (SIMPLE or MUTUAL) without caCertificates: the server certificate is not verified",
);
export const NoServerCertificateVerificationPortLevel = type(
  "MSH0129",
  "NoServerCertificateVerificationPortLevel",
  "Warning",
  "A DestinationRule port-level setting originates TLS without caCertificates: the server certificate is not verified",
);
export const VirtualServiceUnreachableRule = type(
  "MSH0130",
  "VirtualServiceUnreachableRule",
  "Warning",
  "A VirtualService route that an earlier route without conditions (or with the same conditions) always takes first",
);
export const VirtualServiceIneffectiveMatch = type(
  "MSH0131",
  "VirtualServiceIneffectiveMatch",
  "Info",
  "A VirtualService match that an earlier match of the same or an earlier route already takes",
);
export const VirtualServiceHostNotFoundInGateway = type(
  "MSH0132",
  "VirtualServiceHostNotFoundInGateway",
  "Warning",
  "A VirtualService host is among the hosts of none of the Gateways it is bound to",
);
export const SchemaWarning = type("MSH0133", "SchemaWarning", "Warning", "The resource is accepted with a schema warning (unknown field, ignored value)");
export const ServiceEntryAddressesRequired = type(
  "MSH0134",
  "ServiceEntryAddressesRequired",
  "Warning",
  "A ServiceEntry with a TCP (or unspecified) port protocol and no addresses: every such entry on that port shares one listener",
);
export const DeprecatedAnnotation = type("MSH0135", "DeprecatedAnnotation", "Info", "A deprecated mesh annotation");
export const AlphaAnnotation = type("MSH0136", "AlphaAnnotation", "Info", "A mesh annotation of an alpha-phase feature");
export const DeploymentConflictingPorts = type(
  "MSH0137",
  "DeploymentConflictingPorts",
  "Warning",
  "A deployment's pods are selected by several Services that map the same targetPort from different ports",
);
export const GatewayDuplicateCertificate = type(
  "MSH0138",
  "GatewayDuplicateCertificate",
  "Warning",
  "Several Gateways use the same certificate: clients reusing HTTP/2 connections may get 404s",
);
export const IngressRouteRulesNotAffected = type(
  "MSH0140",
  "IngressRouteRulesNotAffected",
  "Warning",
  "A gateway VirtualService routes to a host without subset that a mesh VirtualService splits by subset: the split does not apply to gateway requests",
);
export const InvalidApplicationUID = type("MSH0144", "InvalidApplicationUID", "Warning", "A workload runs as user ID 1337, which the sidecar proxy uses");
export const ConflictingGateways = type(
  "MSH0145",
  "ConflictingGateways",
  "Error",
  "Gateways selecting the same workloads define the same port and host: one of them is ignored",
);
export const JwtClaimBasedRoutingWithoutRequestAuthN = type(
  "MSH0149",
  "JwtClaimBasedRoutingWithoutRequestAuthN",
  "Error",
  "A gateway VirtualService matches on JWT claims but no RequestAuthentication applies to the gateway's workloads",
);
export const ExternalNameServiceTypeInvalidPortName = type(
  "MSH0150",
  "ExternalNameServiceTypeInvalidPortName",
  "Warning",
  "An ExternalName Service port whose name does not say its protocol (or says tcp)",
);
export const InvalidGatewayCredential = type(
  "MSH0161",
  "InvalidGatewayCredential",
  "Error",
  "The Secret a Gateway server's credentialName names has no usable certificate and key",
);
export const GatewayPortNotDefinedOnService = type(
  "MSH0162",
  "GatewayPortNotDefinedOnService",
  "Warning",
  "A Gateway server port is not a port of the Service of the gateway workloads it selects",
);
export const DestinationRuleSubsetNotSelectPods = type(
  "MSH0173",
  "DestinationRuleSubsetNotSelectPods",
  "Error",
  "A DestinationRule subset's labels select no workload of the service: routes to it get no healthy upstream (503)",
);
export const UnknownDestinationRuleHost = type(
  "MSH0174",
  "UnknownDestinationRuleHost",
  "Warning",
  "A DestinationRule host matches no service of the mesh (Service or ServiceEntry)",
);
export const ConflictingServiceEntryProtocol = type(
  "MSH0177",
  "ConflictingServiceEntryProtocol",
  "Warning",
  "Several ServiceEntries define the same host and port with different protocols",
);

/** Codes of checks of this mesh only: a range upstream's message list does not use. */
export const OWN_CODE_RANGE = Object.freeze({ first: "MSH0900", last: "MSH0999" });

export const StrictWorkloadNeedsDestinationRule = type(
  "MSH0901",
  "StrictWorkloadNeedsDestinationRule",
  "Warning",
  "A STRICT PeerAuthentication the clients cannot infer has no DestinationRule with tls mode MESH_MUTUAL for the services of its workloads (spec 1, rule 5)",
);
export const DisabledWorkloadNeedsDestinationRule = type(
  "MSH0902",
  "DisabledWorkloadNeedsDestinationRule",
  "Error",
  "A workload PeerAuthentication DISABLE under a namespace or mesh that is not DISABLE has no DestinationRule with tls mode DISABLE: proxied clients send mutual TLS (spec 1, rule 7)",
);
export const PortLevelMtlsPortNotBound = type(
  "MSH0903",
  "PortLevelMtlsPortNotBound",
  "Warning",
  "A portLevelMtls entry names a container port no Service targets: it is ignored (spec 1, rule 6)",
);
export const GatewayPolicyOutsideRootNamespace = type(
  "MSH0905",
  "GatewayPolicyOutsideRootNamespace",
  "Error",
  "A policy selects the ingress gateway's labels outside the root namespace, so it applies to nothing",
);
export const PeerAuthenticationSelectorInRootNamespace = type(
  "MSH0906",
  "PeerAuthenticationSelectorInRootNamespace",
  "Warning",
  "A PeerAuthentication with a selector in the root namespace is ignored",
);
export const OverlappingApiSpecBindings = type(
  "MSH0910",
  "OverlappingHTTPAPISpecBindings",
  "Error",
  "Two HTTPAPISpecs bound to the same service have patterns that match the same request (the spec forbids overlap)",
);
export const OverlappingQuotaSpecBindings = type(
  "MSH0911",
  "OverlappingQuotaSpecBindings",
  "Error",
  "Two QuotaSpecs bound to the same service have rules that match the same request (the spec forbids overlap)",
);
export const VirtualServiceDestinationLabels = type(
  "MSH0920",
  "VirtualServiceDestinationLabels",
  "Error",
  "MeshService labels on a VirtualService destination (they must be empty there); the VirtualService is refused",
);

export const ALL_MESSAGE_TYPES: readonly MessageType[] = Object.freeze(
  [
    InternalError,
    Deprecated,
    ReferencedResourceNotFound,
    NamespaceNotInjected,
    PodMissingProxy,
    SchemaValidationError,
    MisplacedAnnotation,
    UnknownAnnotation,
    ConflictingMeshGatewayVirtualServiceHosts,
    VirtualServiceDestinationPortSelectorRequired,
    MtlsPolicyConflict,
    DeploymentAssociatedToMultipleServices,
    PortNameIsNotUnderNamingConvention,
    InvalidRegexp,
    NamespaceMultipleInjectionLabels,
    InvalidAnnotation,
    NoMatchingWorkloadsFound,
    NoServerCertificateVerificationDestinationLevel,
    NoServerCertificateVerificationPortLevel,
    VirtualServiceUnreachableRule,
    VirtualServiceIneffectiveMatch,
    VirtualServiceHostNotFoundInGateway,
    SchemaWarning,
    ServiceEntryAddressesRequired,
    DeprecatedAnnotation,
    AlphaAnnotation,
    DeploymentConflictingPorts,
    GatewayDuplicateCertificate,
    IngressRouteRulesNotAffected,
    InvalidApplicationUID,
    ConflictingGateways,
    JwtClaimBasedRoutingWithoutRequestAuthN,
    ExternalNameServiceTypeInvalidPortName,
    InvalidGatewayCredential,
    GatewayPortNotDefinedOnService,
    DestinationRuleSubsetNotSelectPods,
    UnknownDestinationRuleHost,
    ConflictingServiceEntryProtocol,
    StrictWorkloadNeedsDestinationRule,
    DisabledWorkloadNeedsDestinationRule,
    PortLevelMtlsPortNotBound,
    GatewayPolicyOutsideRootNamespace,
    PeerAuthenticationSelectorInRootNamespace,
    OverlappingApiSpecBindings,
    OverlappingQuotaSpecBindings,
    VirtualServiceDestinationLabels,
  ].sort((a, b) => (a.code < b.code ? -1 : 1)),
);

/** Whether a code is this mesh's own (no upstream counterpart). */
export function isOwnCode(code: string): boolean {
  return code >= OWN_CODE_RANGE.first && code <= OWN_CODE_RANGE.last;
}

export function messageTypeByCode(code: string): MessageType | undefined {
  return ALL_MESSAGE_TYPES.find((t) => t.code === code);
}
