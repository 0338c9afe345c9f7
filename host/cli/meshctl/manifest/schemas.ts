/**
 * Structural OpenAPI v3 schemas of each mesh kind's `spec`, as CRDs carry
 * them (apiextensions.k8s.io/v1 requires structural schemas: every node has a
 * type, unless it keeps unknown fields or is int-or-string). The fields are
 * those the catalog decodes (host/config/resources, docs/meshctl.md
 * "Resources"); deep upstream structures the catalog checks itself (HTTP
 * routes, traffic policies, hub rules) keep unknown fields here, so the
 * orchestrator stores what upstream's samples hold and the admission webhook
 * (disco-discovery `/validate`) gives the precise error.
 */
import { OPERATION_FIELDS, SOURCE_FIELDS } from "../../../config/resources/security.ts";
export type Schema = Record<string, unknown>;

const str: Schema = { type: "string" };
const strs: Schema = { type: "array", items: str };
const bool: Schema = { type: "boolean" };
const int: Schema = { type: "integer", format: "int32" };
const port: Schema = { type: "integer", format: "int32", minimum: 0, maximum: 65535 };
const labels: Schema = { type: "object", additionalProperties: str };
const open: Schema = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
const openList: Schema = { type: "array", items: open };
const obj = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({ type: "object", properties, ...extra });
const list = (items: Schema): Schema => ({ type: "array", items });
const oneOfStrings = (values: readonly string[]): Schema => ({ type: "string", enum: [...values] });

const workloadSelector = obj({ matchLabels: labels });

const authzSource = obj(Object.fromEntries(SOURCE_FIELDS.map((k) => [k, strs])));
const authzOperation = obj(Object.fromEntries(OPERATION_FIELDS.map((k) => [k, strs])));

const AUTHORIZATION_POLICY = obj({
  selector: workloadSelector,
  action: oneOfStrings(["ALLOW", "DENY", "AUDIT", "CUSTOM"]),
  provider: obj({ name: str }),
  rules: list(
    obj({
      from: list(obj({ source: authzSource })),
      to: list(obj({ operation: authzOperation })),
      when: list(obj({ key: str, values: strs, notValues: strs }, { required: ["key"] })),
    }),
  ),
});

const MTLS_MODE = oneOfStrings(["UNSET", "DISABLE", "PERMISSIVE", "STRICT"]);
const PEER_AUTHENTICATION = obj({
  selector: workloadSelector,
  mtls: obj({ mode: MTLS_MODE }),
  portLevelMtls: { type: "object", additionalProperties: obj({ mode: MTLS_MODE }) },
});

const REQUEST_AUTHENTICATION = obj({
  selector: workloadSelector,
  jwtRules: list(
    obj(
      {
        issuer: str,
        audiences: strs,
        jwksUri: str,
        jwks: str,
        fromHeaders: list(obj({ name: str, prefix: str }, { required: ["name"] })),
        fromParams: strs,
        outputPayloadToHeader: str,
        forwardOriginalToken: bool,
        outputClaimToHeaders: list(obj({ header: str, claim: str })),
        timeout: str,
      },
      { required: ["issuer"] },
    ),
  ),
});

const servicePort = obj({ number: port, protocol: str, name: str, targetPort: port });

const VIRTUAL_SERVICE = obj({ hosts: strs, gateways: strs, exportTo: strs, http: openList, tcp: openList, tls: openList });

const DESTINATION_RULE = obj({
  host: str,
  trafficPolicy: open,
  subsets: list(obj({ name: str, labels, trafficPolicy: open }, { required: ["name"] })),
  exportTo: strs,
  workloadSelector: open,
});

const GATEWAY = obj({
  selector: labels,
  servers: list(
    obj(
      {
        port: servicePort,
        hosts: strs,
        tls: open,
        bind: str,
        defaultEndpoint: str,
        name: str,
      },
      { required: ["port", "hosts"] },
    ),
  ),
});

const SERVICE_ENTRY = obj({
  hosts: strs,
  addresses: strs,
  ports: list(servicePort),
  location: oneOfStrings(["MESH_EXTERNAL", "MESH_INTERNAL"]),
  resolution: oneOfStrings(["NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN"]),
  endpoints: list(
    obj({ address: str, ports: { type: "object", additionalProperties: int }, labels, network: str, locality: str, weight: int, serviceAccount: str }),
  ),
  workloadSelector: obj({ labels }),
  exportTo: strs,
  subjectAltNames: strs,
});

const serviceRef = obj({ name: str, namespace: str, domain: str, service: str, labels });
const specRef = obj({ name: str, namespace: str });

/** `spec` schema of each kind, by kind. Kinds of config.mesh.io keep their rule bodies open, as upstream's CRDs of that era did. */
export const SPEC_SCHEMAS: Readonly<Record<string, Schema>> = {
  AuthorizationPolicy: AUTHORIZATION_POLICY,
  PeerAuthentication: PEER_AUTHENTICATION,
  RequestAuthentication: REQUEST_AUTHENTICATION,
  VirtualService: VIRTUAL_SERVICE,
  DestinationRule: DESTINATION_RULE,
  Gateway: GATEWAY,
  ServiceEntry: SERVICE_ENTRY,
  HTTPAPISpec: obj({ attributes: open, patterns: openList, apiKeys: openList }),
  HTTPAPISpecBinding: obj({ services: list(serviceRef), apiSpecs: list(specRef) }),
  QuotaSpec: obj({ rules: openList }),
  QuotaSpecBinding: obj({ services: list(serviceRef), quotaSpecs: list(specRef) }),
  HttpClientConfig: open,
  TcpClientConfig: open,
  HubRule: open,
  HubQuota: open,
  HubAccessLog: open,
  HubMetrics: open,
};

/** The whole object's schema: `spec` as above, `status` open (upstream's status field). */
export function objectSchema(kind: string): Schema {
  const spec = SPEC_SCHEMAS[kind];
  if (!spec) throw new Error(`no schema for kind ${kind}`);
  return obj({ spec: { ...spec, description: `The ${kind}'s configuration (docs/meshctl.md, Resources).` }, status: open });
}
