import type { Resource as MeshResource } from "../config/catalog.ts";
import { packJson } from "../wire/envoy_protos.ts";
import type { ProxyNode } from "./ads_server.ts";
import type { Resource } from "./resource_set.ts";

/**
 * Orchestrator Secrets (a gateway's `credentialName`, a DestinationRule's on
 * a gateway) reach only the proxies that may hold them, as upstream's control
 * plane serves them: to a proxy that proved on the secure port
 * (`--secureGrpcAddr`) a workload identity of the Secret's namespace, which
 * is also the namespace its node names. Nothing else (the plain-text port,
 * another namespace, proxyless clients, the debug pages) sees a Secret's
 * data.
 *
 * - Envoy asks for them by SDS over ADS under upstream's names:
 *   `kubernetes://<name>` (the certificate chain and key: `tls.crt` and
 *   `tls.key`, or a generic Secret's `cert` and `key`) and
 *   `kubernetes://<name>-cacert` (the trust roots: `ca.crt`, or `cacert`).
 * - Our sidecars get the Secret documents of their namespace among the
 *   configuration documents (a Node gateway's HTTPS servers read them).
 *
 * Pure.
 */

type Json = Record<string, unknown>;
const SECRET_TYPE = "envoy.extensions.transport_sockets.tls.v3.Secret";

/** The namespace whose Secrets a proxy may be served: its node's, when its certificate proved an identity there. */
export function secretNamespace(node: Pick<ProxyNode, "identity">, nodeNamespace: string | undefined): string | undefined {
  return node.identity && node.identity.namespace === nodeNamespace ? nodeNamespace : undefined;
}

const inline = (pem: string) => ({ inline_bytes: Buffer.from(pem).toString("base64") });

/** The SDS resources of a namespace's Secrets, by name. */
export function sdsSecrets(secrets: readonly MeshResource<"Secret">[], namespace: string): Map<string, Resource> {
  const out = new Map<string, Resource>();
  const add = (name: string, json: Json) => out.set(name, { name, any: packJson(SECRET_TYPE, { name, ...json }) });
  for (const s of secrets) {
    if (s.namespace !== namespace) continue;
    const d = s.spec.data;
    const cert = d["tls.crt"] ?? d.cert;
    const key = d["tls.key"] ?? d.key;
    const ca = d["ca.crt"] ?? d.cacert;
    if (cert && key) add(`kubernetes://${s.name}`, { tls_certificate: { certificate_chain: inline(cert), private_key: inline(key) } });
    if (ca) add(`kubernetes://${s.name}-cacert`, { validation_context: { trusted_ca: inline(ca) } });
  }
  return out;
}

/** Whether a configuration document (named `<Kind>/<namespace>/<name>`) is a Secret, and its namespace. */
export function secretDocumentNamespace(documentName: string): string | undefined {
  const [kind, namespace] = documentName.split("/", 2);
  return kind === "Secret" ? (namespace ?? "") : undefined;
}

/** A Secret document's body as the debug pages may show it: its keys, not its values. */
export function redactedSecret(body: Json): Json {
  const hide = (m: unknown) => (m && typeof m === "object" ? Object.fromEntries(Object.keys(m).map((k) => [k, "[redacted]"])) : m);
  return { ...body, ...(body.data ? { data: hide(body.data) } : {}), ...(body.stringData ? { stringData: hide(body.stringData) } : {}) };
}
