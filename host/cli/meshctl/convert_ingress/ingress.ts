import { Field } from "../../../config/decode.ts";
import { resourceName, type SourceDocument } from "../../../config/documents.ts";
import { ConfigError } from "../../../config/errors.ts";

/** API versions of Ingress that convert-ingress reads. */
export const INGRESS_API_VERSIONS = ["networking.k8s.io/v1", "networking.k8s.io/v1beta1", "extensions/v1beta1"] as const;
export const PATH_TYPES = ["Exact", "Prefix", "ImplementationSpecific"] as const;
export type PathType = (typeof PATH_TYPES)[number];

/** A backend: a service port by number or name, or something that is not a service. */
export type IngressBackend =
  | { kind: "service"; service: string; port: { number: number } | { name: string }; field: Field }
  | { kind: "unsupported"; what: string; field: Field };

export interface IngressPath {
  path: string;
  /** Absent in v1beta1 documents that predate pathType. */
  pathType?: PathType;
  backend?: IngressBackend;
  field: Field;
}

export interface IngressRule {
  /** `*` when the rule names no host. */
  host: string;
  /** Undefined when the rule has no `http` section. */
  paths?: IngressPath[];
  field: Field;
}

export interface IngressTls {
  hosts: string[];
  secretName?: string;
  field: Field;
}

/** One Ingress document, decoded (v1 and v1beta1 field names folded together). */
export interface Ingress {
  name: string;
  namespace: string;
  annotations: Record<string, string>;
  ingressClassName?: string;
  defaultBackend?: IngressBackend;
  tls: IngressTls[];
  rules: IngressRule[];
  /** The document root, to attach warnings to. */
  field: Field;
}

/**
 * Decodes an Ingress document; any other kind is an error naming the document
 * (spec 3: "input must be an Ingress"). Warnings (unknown fields) go to `warnings`.
 */
export function decodeIngress(doc: SourceDocument, defaultNamespace: string, warnings: string[]): Ingress {
  const resource = resourceName(doc);
  if (doc.kind !== "Ingress") {
    throw new ConfigError({ file: doc.file, resource }, "kind", "Ingress (convert-ingress converts only Ingress resources)", JSON.stringify(doc.kind));
  }
  const root = Field.root(doc.body, { file: doc.file, resource, warnings });
  if (!(INGRESS_API_VERSIONS as readonly string[]).includes(doc.apiVersion)) root.get("apiVersion").fail(`one of ${INGRESS_API_VERSIONS.join(", ")}`);
  const v1 = doc.apiVersion === "networking.k8s.io/v1";
  const metadata = root.get("metadata");
  const spec = root.get("spec").allowOnly(v1 ? ["ingressClassName", "defaultBackend", "tls", "rules"] : ["ingressClassName", "backend", "tls", "rules"]);
  const backendField = spec.get(v1 ? "defaultBackend" : "backend");
  return {
    name: doc.name,
    namespace: doc.namespace ?? defaultNamespace,
    annotations: metadata.get("annotations").stringMap(),
    ingressClassName: spec.get("ingressClassName").optionalString(),
    defaultBackend: backendField.present ? decodeBackend(backendField, v1) : undefined,
    tls: spec
      .get("tls")
      .list()
      .map((t) => ({
        hosts: t
          .allowOnly(["hosts", "secretName"])
          .get("hosts")
          .list()
          .map((h) => h.nonEmptyString()),
        secretName: t.get("secretName").optionalString() || undefined,
        field: t,
      })),
    rules: spec
      .get("rules")
      .list()
      .map((r) => decodeRule(r.allowOnly(["host", "http"]), v1)),
    field: root,
  };
}

function decodeRule(rule: Field, v1: boolean): IngressRule {
  const http = rule.get("http");
  return {
    host: rule.get("host").optionalString() || "*",
    paths: http.present
      ? http
          .allowOnly(["paths"])
          .get("paths")
          .nonEmptyList()
          .map((p) => decodePath(p, v1))
      : undefined,
    field: rule,
  };
}

function decodePath(p: Field, v1: boolean): IngressPath {
  p.allowOnly(["path", "pathType", "backend"]);
  const pathType = p.get("pathType").present ? p.get("pathType").enumOf(PATH_TYPES) : undefined;
  const path = p.get("path").optionalString() ?? "";
  if ((pathType === "Exact" || pathType === "Prefix") && !path.startsWith("/")) p.get("path").fail(`an absolute path starting with "/" (pathType ${pathType})`);
  const backend = p.get("backend");
  return { path, pathType, backend: backend.present ? decodeBackend(backend, v1) : undefined, field: p };
}

function decodeBackend(b: Field, v1: boolean): IngressBackend {
  if (b.get("resource").present) {
    const r = b.get("resource");
    const kind = r.get("kind").optionalString() ?? "resource";
    return { kind: "unsupported", what: `${kind} ${r.get("name").optionalString() ?? ""}`.trim(), field: b };
  }
  if (v1) {
    const service = b.allowOnly(["service", "resource"]).get("service");
    const port = service.allowOnly(["name", "port"]).get("port").allowOnly(["number", "name"]);
    const which = port.oneOf(["number", "name"]);
    return {
      kind: "service",
      service: service.get("name").nonEmptyString(),
      port: which === "number" ? { number: port.get("number").integer(1, 65535) } : { name: port.get("name").nonEmptyString() },
      field: b,
    };
  }
  b.allowOnly(["serviceName", "servicePort", "resource"]);
  const port = b.get("servicePort");
  // IntOrString: a number, or a port name (digits in a string are taken as a number).
  const byNumber = typeof port.value === "number" || (typeof port.value === "string" && /^\d+$/.test(port.value));
  return {
    kind: "service",
    service: b.get("serviceName").nonEmptyString(),
    port: byNumber ? { number: port.integer(1, 65535) } : { name: port.nonEmptyString() },
    field: b,
  };
}
