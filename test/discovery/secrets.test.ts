// Who is served a Secret (pure, from the mesh snapshot): only a proxy whose
// certificate proved, on the secure port, an identity of the Secret's
// namespace (the namespace its node names too): Envoy as SDS resources under
// upstream's kubernetes:// names, our sidecars as documents. Proxyless
// clients, the plain-text port and other namespaces get none of them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import type { ProxyNode } from "../../host/discovery/ads_server.ts";
import { documentsFromResources } from "../../host/discovery/config_distribution.ts";
import { meshSnapshot, resourcesFor } from "../../host/discovery/mesh_snapshot.ts";
import { CONFIG_DOCUMENT, SECRET } from "../../host/discovery/type_urls.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";

const SECRETS = `apiVersion: v1
kind: Secret
metadata: {name: api-client, namespace: shop}
type: kubernetes.io/tls
stringData: {tls.crt: "CERT", tls.key: "KEY", ca.crt: "ROOTS"}
---
apiVersion: v1
kind: Secret
metadata: {name: other, namespace: elsewhere}
type: Opaque
stringData: {cert: "C2", key: "K2", cacert: "R2"}
`;
const snapshot = meshSnapshot(
  1,
  loadDocuments(parseDocuments(SECRETS, "s.yaml"), ["s.yaml"], filterChecks(FilterModule.load()), DEFAULT_DOMAIN),
  "mesh-system",
);
const identity = (namespace: string) => ({ uri: `spiffe://cluster.local/ns/${namespace}/sa/gw`, namespace, serviceAccount: "gw" });
const envoy = (id?: ReturnType<typeof identity>): ProxyNode => ({
  id: "router~10.0.0.5~egress-1.shop~shop.svc.cluster.local",
  cluster: "",
  metadata: {},
  userAgentName: "envoy",
  ...(id ? { identity: id } : {}),
});
const agent = (id?: ReturnType<typeof identity>): ProxyNode => ({
  id: "sidecar~10.0.0.6~gw-1.shop~shop.svc.cluster.local",
  cluster: "",
  metadata: {},
  userAgentName: "disco-agent",
  ...(id ? { identity: id } : {}),
});
const secretDocuments = (node: ProxyNode) => [...resourcesFor(snapshot, node).get(CONFIG_DOCUMENT)!.keys()].filter((n) => n.startsWith("Secret/"));

describe("Secrets reach only proxies that proved an identity of their namespace", () => {
  it("Envoy: kubernetes://<name> (chain and key) and kubernetes://<name>-cacert, decoded strictly", () => {
    const sds = resourcesFor(snapshot, envoy(identity("shop"))).get(SECRET)!;
    assert.deepEqual([...sds.keys()].sort(), ["kubernetes://api-client", "kubernetes://api-client-cacert"]);
    const root = envoyRoot();
    const cert = decodeAnyStrict(root, sds.get("kubernetes://api-client")!.any).object;
    assert.equal(Buffer.from(cert.tls_certificate.private_key.inline_bytes, "base64").toString(), "KEY");
    assert.equal(Buffer.from(cert.tls_certificate.certificate_chain.inline_bytes, "base64").toString(), "CERT");
    const ca = decodeAnyStrict(root, sds.get("kubernetes://api-client-cacert")!.any).object;
    assert.equal(Buffer.from(ca.validation_context.trusted_ca.inline_bytes, "base64").toString(), "ROOTS");
  });

  it("Envoy without a proven identity, or with one of another namespace: no Secret", () => {
    assert.equal(resourcesFor(snapshot, envoy()).get(SECRET), undefined);
    assert.equal(resourcesFor(snapshot, envoy(identity("elsewhere"))).get(SECRET), undefined);
  });

  it("our sidecars: the Secret documents of their own namespace, over the secure port only", () => {
    assert.deepEqual(secretDocuments(agent(identity("shop"))), ["Secret/shop/api-client"]);
    const [doc] = documentsFromResources([
      resourcesFor(snapshot, agent(identity("shop")))
        .get(CONFIG_DOCUMENT)!
        .get("Secret/shop/api-client")!.any,
    ]);
    assert.equal((doc.body.stringData as Record<string, string>)["tls.key"], "KEY");
    assert.deepEqual(secretDocuments(agent()), []);
    assert.deepEqual(secretDocuments(agent(identity("elsewhere"))), []);
  });

  it("proxyless clients: none", () => {
    const proxyless: ProxyNode = { id: "grpc-client", cluster: "", metadata: {}, userAgentName: "gRPC Node Pure JS", identity: identity("shop") };
    assert.deepEqual(
      [...resourcesFor(snapshot, proxyless).get(CONFIG_DOCUMENT)!.keys()].filter((n) => n.startsWith("Secret/")),
      [],
    );
  });
});
