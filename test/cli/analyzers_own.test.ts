import { describe } from "node:test";
import { type AnalyzerCase, runCases } from "./analyzers_support.ts";

// This mesh's own analyzers (codes MSH0900-MSH0999) and the provider check, in the same table style.
const CASES: AnalyzerCase[] = [
  {
    name: "destination labels",
    inputFiles: ["virtualservice-destination-labels.bad.yaml"],
    analyzer: "virtualservice-destination-labels",
    expected: [["VirtualServiceDestinationLabels", "VirtualService default/reviews"]],
  },
  { name: "no destination labels", inputFiles: ["virtualservice-destination-labels.good.yaml"], analyzer: "virtualservice-destination-labels", expected: [] },
  {
    name: "rule 5",
    inputFiles: ["peerauthentication-destinationrule.strict.bad.yaml"],
    analyzer: "peerauthentication-destinationrule",
    expected: [["StrictWorkloadNeedsDestinationRule", "PeerAuthentication default/reviews"]],
  },
  {
    name: "conflict",
    inputFiles: ["peerauthentication-destinationrule.conflict.bad.yaml"],
    analyzer: "peerauthentication-destinationrule",
    expected: [["MTLSPolicyConflict", "DestinationRule default/reviews"]],
  },
  {
    name: "rule 7",
    inputFiles: ["peerauthentication-destinationrule.disable.bad.yaml"],
    analyzer: "peerauthentication-destinationrule",
    expected: [["DisabledWorkloadNeedsDestinationRule", "PeerAuthentication default/ratings"]],
  },
  { name: "agreeing modes", inputFiles: ["peerauthentication-destinationrule.good.yaml"], analyzer: "peerauthentication-destinationrule", expected: [] },
  {
    name: "an unbound port",
    inputFiles: ["peerauthentication-port-level-mtls.bad.yaml"],
    analyzer: "peerauthentication-port-level-mtls",
    expected: [["PortLevelMtlsPortNotBound", "PeerAuthentication default/reviews"]],
  },
  { name: "bound ports", inputFiles: ["peerauthentication-port-level-mtls.good.yaml"], analyzer: "peerauthentication-port-level-mtls", expected: [] },
  {
    name: "a selector in the root namespace",
    inputFiles: ["peerauthentication-root-selector.bad.yaml"],
    analyzer: "peerauthentication-root-selector",
    expected: [["PeerAuthenticationSelectorInRootNamespace", "PeerAuthentication mesh-system/reviews"]],
  },
  {
    name: "no selector in the root namespace",
    inputFiles: ["peerauthentication-root-selector.good.yaml"],
    analyzer: "peerauthentication-root-selector",
    expected: [],
  },
  {
    name: "a gateway policy outside the root namespace",
    inputFiles: ["gateway-policy-namespace.bad.yaml"],
    analyzer: "gateway-policy-namespace",
    expected: [["GatewayPolicyOutsideRootNamespace", "RequestAuthentication default/ingress-jwt"]],
  },
  { name: "gateway policies in the root namespace", inputFiles: ["gateway-policy-namespace.good.yaml"], analyzer: "gateway-policy-namespace", expected: [] },
  {
    name: "undefined specs",
    inputFiles: ["binding-references.bad.yaml"],
    analyzer: "binding-references",
    expected: [
      ["ReferencedResourceNotFound", "HTTPAPISpecBinding default/books"],
      ["ReferencedResourceNotFound", "QuotaSpecBinding default/books"],
    ],
  },
  { name: "defined specs", inputFiles: ["binding-references.good.yaml"], analyzer: "binding-references", expected: [] },
  {
    name: "overlapping specs",
    inputFiles: ["spec-binding-overlap.bad.yaml"],
    analyzer: "spec-binding-overlap",
    expected: [
      ["OverlappingHTTPAPISpecBindings", "HTTPAPISpecBinding default/books-isbn"],
      ["OverlappingHTTPAPISpecBindings", "HTTPAPISpecBinding default/shelves"],
      ["OverlappingQuotaSpecBindings", "QuotaSpecBinding default/books"],
    ],
  },
  { name: "disjoint specs", inputFiles: ["spec-binding-overlap.good.yaml"], analyzer: "spec-binding-overlap", expected: [] },
  {
    name: "an undeclared provider",
    inputFiles: ["authorizationpolicy-provider.yaml"],
    analyzer: "authorizationpolicy-provider",
    meshConfigFile: "mesh-config.ext-authz.yaml",
    expected: [["ReferencedResourceNotFound", "AuthorizationPolicy foo/ext-authz-typo"]],
  },
  { name: "nothing known without a mesh config", inputFiles: ["authorizationpolicy-provider.yaml"], analyzer: "authorizationpolicy-provider", expected: [] },
];

describe("meshctl analyze: this mesh's own analyzers", () => runCases(CASES));
