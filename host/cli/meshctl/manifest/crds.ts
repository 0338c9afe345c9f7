import { HUB_API_VERSION } from "../../../config/resources/hub_rules.ts";
import { NETWORKING_API_VERSION, NETWORKING_API_VERSIONS } from "../../../config/resources/networking.ts";
import { SECURITY_API_VERSION, SECURITY_API_VERSIONS } from "../../../config/resources/security.ts";
import { objectSchema } from "./schemas.ts";

/**
 * The CustomResourceDefinitions of every mesh kind the catalog decodes, with
 * the versions the catalog serves (as upstream: networking v1alpha3, v1beta1
 * and v1 with v1alpha3 stored; security v1beta1 and v1 with v1beta1 stored;
 * config v1alpha2) and one structural schema for all versions of a kind (the
 * version changes nothing else, docs/meshctl.md "Resources").
 */
interface KindNames {
  readonly kind: string;
  readonly plural: string;
  readonly shortNames?: readonly string[];
  /** Extra `kubectl get` columns (upstream's). */
  readonly columns?: ReadonlyArray<{ name: string; jsonPath: string; type: string; description: string }>;
}

interface Group {
  readonly apiVersions: readonly string[];
  readonly storage: string;
  /** `kubectl get <category>`: upstream's `istio-io` and `<group>-istio-io`, renamed. */
  readonly categories: readonly string[];
  readonly kinds: readonly KindNames[];
}

const hosts = { name: "Hosts", jsonPath: ".spec.hosts", type: "string", description: "The destination hosts to which traffic is being sent" };

export const GROUPS: readonly Group[] = [
  {
    apiVersions: NETWORKING_API_VERSIONS,
    storage: NETWORKING_API_VERSION,
    categories: ["mesh-io", "networking-mesh-io"],
    kinds: [
      {
        kind: "VirtualService",
        plural: "virtualservices",
        shortNames: ["vs"],
        columns: [
          { name: "Gateways", jsonPath: ".spec.gateways", type: "string", description: "The names of gateways and sidecars that should apply these routes" },
          hosts,
        ],
      },
      {
        kind: "DestinationRule",
        plural: "destinationrules",
        shortNames: ["dr"],
        columns: [{ name: "Host", jsonPath: ".spec.host", type: "string", description: "The name of a service from the service registry" }],
      },
      { kind: "Gateway", plural: "gateways", shortNames: ["gw"] },
      {
        kind: "ServiceEntry",
        plural: "serviceentries",
        shortNames: ["se"],
        columns: [
          { ...hosts, description: "The hosts associated with the ServiceEntry" },
          {
            name: "Location",
            jsonPath: ".spec.location",
            type: "string",
            description: "Whether the service is external to the mesh or part of the mesh (MESH_EXTERNAL or MESH_INTERNAL)",
          },
          { name: "Resolution", jsonPath: ".spec.resolution", type: "string", description: "Service discovery mode for the hosts (NONE, STATIC, or DNS)" },
        ],
      },
    ],
  },
  {
    apiVersions: SECURITY_API_VERSIONS,
    storage: SECURITY_API_VERSION,
    categories: ["mesh-io", "security-mesh-io"],
    kinds: [
      {
        kind: "AuthorizationPolicy",
        plural: "authorizationpolicies",
        shortNames: ["ap"],
        columns: [{ name: "Action", jsonPath: ".spec.action", type: "string", description: "The operation to take." }],
      },
      {
        kind: "PeerAuthentication",
        plural: "peerauthentications",
        shortNames: ["pa"],
        columns: [{ name: "Mode", jsonPath: ".spec.mtls.mode", type: "string", description: "Defines the mTLS mode used for peer authentication." }],
      },
      { kind: "RequestAuthentication", plural: "requestauthentications", shortNames: ["ra"] },
    ],
  },
  {
    apiVersions: [HUB_API_VERSION],
    storage: HUB_API_VERSION,
    categories: ["mesh-io", "config-mesh-io"],
    kinds: [
      { kind: "HTTPAPISpec", plural: "httpapispecs" },
      { kind: "HTTPAPISpecBinding", plural: "httpapispecbindings" },
      { kind: "QuotaSpec", plural: "quotaspecs" },
      { kind: "QuotaSpecBinding", plural: "quotaspecbindings" },
      { kind: "HttpClientConfig", plural: "httpclientconfigs" },
      { kind: "TcpClientConfig", plural: "tcpclientconfigs" },
      { kind: "HubRule", plural: "hubrules" },
      { kind: "HubQuota", plural: "hubquotas" },
      { kind: "HubAccessLog", plural: "hubaccesslogs" },
      { kind: "HubMetrics", plural: "hubmetrics" },
    ],
  },
];

/** Every CRD, in GROUPS order. */
export function customResourceDefinitions(labels: Readonly<Record<string, string>>): Array<Record<string, unknown>> {
  return GROUPS.flatMap((g) => {
    const group = g.storage.split("/")[0];
    return g.kinds.map((k) => ({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${k.plural}.${group}`, labels: { ...labels } },
      spec: {
        group,
        names: {
          kind: k.kind,
          listKind: `${k.kind}List`,
          plural: k.plural,
          singular: k.kind.toLowerCase(),
          ...(k.shortNames ? { shortNames: [...k.shortNames] } : {}),
          categories: [...g.categories],
        },
        scope: "Namespaced",
        versions: g.apiVersions.map((apiVersion) => ({
          name: apiVersion.split("/")[1],
          served: true,
          storage: apiVersion === g.storage,
          schema: { openAPIV3Schema: objectSchema(k.kind) },
          subresources: { status: {} },
          additionalPrinterColumns: [
            ...(k.columns ?? []).map((c) => ({ ...c })),
            {
              name: "Age",
              jsonPath: ".metadata.creationTimestamp",
              type: "date",
              description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
            },
          ],
        })),
      },
    }));
  });
}
