// Client TLS and Secrets through the real processes: mesh_ca issues
// disco-discovery's certificate and a gateway's; disco-discovery serves its
// folder on the plain-text and the secure port. An Envoy sidecar is served
// auto mutual TLS (transport_socket_matches, endpoint tlsMode metadata) and
// a DestinationRule written to the folder is pushed as its cluster's TLS. A
// gateway's DestinationRule credentialName names an orchestrator Secret
// (holding a real mesh_ca certificate): over the secure port, with an
// identity of its namespace, the gateway is served that Secret by SDS; over
// the plain-text port, or as another namespace, it is not; the Secret never
// shows on the debug page or reaches a sidecar over the plain-text port.
// Every response is decoded strictly with Envoy's v3 protos.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { type MeshCa, startMeshCa, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { documentsFromResources } from "../../host/discovery/config_distribution.ts";
import { CLUSTER, CONFIG_DOCUMENT, ENDPOINT, SECRET } from "../../host/discovery/type_urls.ts";
import { envoyType } from "../../host/wire/envoy_protos.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { type Daemon, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { lbEndpoints, originated, socketFor } from "./support/envoy_upstream_eval.ts";
import { type AdsResponse, RawAdsClient } from "./support/raw_ads_client.ts";

const WEB = "web.shop.svc.cluster.local";
const MESH = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web, security.mesh.io/tlsMode: mesh}}
spec: {serviceAccountName: web, containers: [{name: web, image: web}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: shop}
subsets: [{addresses: [{ip: 10.0.1.1, targetRef: {kind: Pod, name: web-1}}, {ip: 10.0.1.2}], ports: [{name: http, port: 80}]}]
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: shop}
spec: {hosts: [api.example.com], location: MESH_EXTERNAL, ports: [{number: 443, name: https, protocol: HTTPS}], resolution: DNS}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: api, namespace: shop}
spec: {host: api.example.com, trafficPolicy: {tls: {mode: MUTUAL, credentialName: api-client}}}
`;
const SIDECAR = { id: "sidecar~10.0.9.1~client-1.shop~shop.svc.cluster.local", user_agent_name: "envoy" };
const GATEWAY = { id: "router~10.0.9.2~egress-1.shop~shop.svc.cluster.local", user_agent_name: "envoy" };
const AGENT = { id: "sidecar~10.0.9.3~gw-1.shop~shop.svc.cluster.local", user_agent_name: "disco-agent" };

describe("disco-discovery: Envoy's client TLS and the Secrets it may fetch, over real ADS streams", () => {
  let ca: MeshCa;
  let disco: Daemon<{ grpc: string; secureGrpc: string; http: string }>;
  const configDir = tempDir("disco-tls-config-");
  const clients: grpc.Client[] = [];
  let gatewayCert: { caCertFile: string; certFile: string; keyFile: string };
  let otherCert: typeof gatewayCert;
  let secretPem: { cert: string; key: string };

  before(async () => {
    ca = await startMeshCa();
    const certDir = tempDir("disco-tls-certs-");
    await writeWorkloadCertFiles(ca, "mesh-system", "disco-discovery", certDir);
    gatewayCert = await writeWorkloadCertFiles(ca, "shop", "egress", tempDir("disco-tls-gw-"));
    otherCert = await writeWorkloadCertFiles(ca, "elsewhere", "egress", tempDir("disco-tls-other-"));
    // The orchestrator Secret the gateway presents to api.example.com: a real certificate, here one mesh_ca issued.
    const client = await writeWorkloadCertFiles(ca, "shop", "api-client", tempDir("disco-tls-secret-"));
    secretPem = { cert: readFileSync(client.certFile, "utf8"), key: readFileSync(client.keyFile, "utf8") };
    const secret = `---
apiVersion: v1
kind: Secret
metadata: {name: api-client, namespace: shop}
type: kubernetes.io/tls
data: {tls.crt: ${Buffer.from(secretPem.cert).toString("base64")}, tls.key: ${Buffer.from(secretPem.key).toString("base64")}, ca.crt: ${Buffer.from(readFileSync(client.caCertFile)).toString("base64")}}
`;
    writeFileSync(join(configDir, "mesh.yaml"), MESH + secret);
    disco = await startDaemon(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        configDir,
        "--grpcAddr",
        "127.0.0.1:0",
        "--secureGrpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, DISCO_CERT_DIR: certDir, DISCO_DEBOUNCE_AFTER: "10ms" },
    );
  });
  after(async () => {
    for (const c of clients) c.close();
    await disco?.stop();
    await ca?.stop();
  });

  const plain = () => {
    const c = new grpc.Client(disco.listening.grpc, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  };
  const secure = (cert: typeof gatewayCert) => {
    const c = new grpc.Client(
      disco.listening.secureGrpc,
      grpc.credentials.createSsl(readFileSync(cert.caCertFile), readFileSync(cert.keyFile), readFileSync(cert.certFile), {
        checkServerIdentity: () => undefined,
      }),
    );
    clients.push(c);
    return c;
  };
  /** One subscription's first response, its resources decoded strictly by name (ACKed). */
  async function fetch(
    channel: grpc.Client,
    node: Record<string, unknown>,
    type: string,
    names: string[] = [],
  ): Promise<{ client: RawAdsClient; response: AdsResponse; byName: Map<string, Record<string, any>> }> {
    const client = new RawAdsClient(channel, node);
    client.send({ type_url: type, resource_names: names });
    const response = await client.next();
    client.ack(response, names);
    const root = envoyRoot();
    const entry = (r: AdsResponse["resources"][number]): [string, Record<string, any>] => {
      if (type === CONFIG_DOCUMENT) return [documentsFromResources([r])[0].name, { kind: documentsFromResources([r])[0].kind }];
      const o = decodeAnyStrict(root, r).object;
      return [o.name ?? o.cluster_name, o];
    };
    return { client, response, byName: new Map(response.resources.map(entry)) };
  }

  it("an Envoy sidecar: auto mutual TLS to the endpoint with a sidecar; a DestinationRule written to the folder is pushed as the cluster's TLS", async () => {
    const channel = plain();
    const { client, byName } = await fetch(channel, SIDECAR, CLUSTER);
    const eds = await fetch(channel, SIDECAR, ENDPOINT, [`outbound|80||${WEB}`]);
    eds.client.stream.end();
    const endpoints = lbEndpoints(eds.byName.get(`outbound|80||${WEB}`));
    const cluster = byName.get(`outbound|80||${WEB}`)!;
    const sockets = endpoints.map((e) => originated(socketFor(cluster, e)));
    assert.deepEqual(
      endpoints.map((e) => e.endpoint.address.socket_address.address),
      ["10.0.1.1", "10.0.1.2"],
    );
    assert.deepEqual(
      sockets.map((o) => o.mode),
      ["MESH_MUTUAL", "DISABLE"],
      "the pod labelled with its sidecar gets mutual TLS",
    );
    assert.deepEqual(sockets[0].sans, ["spiffe://cluster.local/ns/shop/sa/web"]);

    writeFileSync(
      join(configDir, "web-rule.yaml"),
      `apiVersion: networking.mesh.io/v1\nkind: DestinationRule\nmetadata: {name: web, namespace: shop}\nspec: {host: web, trafficPolicy: {tls: {mode: DISABLE}}}\n`,
    );
    const pushed = await waitFor("the cluster pushed with the rule", async () => {
      const r = await Promise.race([
        client.next(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no push within 90 s")), 90_000).unref()),
      ]);
      client.ack(r);
      const c = r.resources.map((x) => decodeAnyStrict(envoyRoot(), x).object).find((x) => x.name === `outbound|80||${WEB}`);
      return c && !c.transport_socket_matches ? c : undefined;
    });
    assert.equal(originated(socketFor(pushed, endpoints[0])).mode, "DISABLE");
    client.stream.end();
  });

  it("a gateway's credentialName: its cluster fetches kubernetes://api-client over ADS", async () => {
    const { client, byName } = await fetch(plain(), GATEWAY, CLUSTER);
    client.stream.end();
    const context = byName.get("outbound|443||api.example.com")!.transport_socket.typed_config.common_tls_context;
    assert.equal(context.tls_certificate_sds_secret_configs[0].name, "kubernetes://api-client");
    assert.ok("ads" in context.tls_certificate_sds_secret_configs[0].sds_config);
  });

  it("over the secure port, with an identity of its namespace, the gateway is served the Secret (the real certificate and key)", async () => {
    const { client, byName } = await fetch(secure(gatewayCert), GATEWAY, SECRET, ["kubernetes://api-client", "kubernetes://api-client-cacert"]);
    client.stream.end();
    const cert = byName.get("kubernetes://api-client")!.tls_certificate;
    assert.equal(Buffer.from(cert.certificate_chain.inline_bytes, "base64").toString(), secretPem.cert);
    assert.equal(Buffer.from(cert.private_key.inline_bytes, "base64").toString(), secretPem.key);
    assert.match(
      Buffer.from(byName.get("kubernetes://api-client-cacert")!.validation_context.trusted_ca.inline_bytes, "base64").toString(),
      /BEGIN CERTIFICATE/,
    );
  });

  it("no Secret over the plain-text port, nor to an identity of another namespace, nor as a document to a sidecar there", async () => {
    for (const channel of [plain(), secure(otherCert)]) {
      const { client, response } = await fetch(channel, GATEWAY, SECRET, ["kubernetes://api-client"]);
      client.stream.end();
      assert.equal(response.resources.length, 0);
    }
    const overPlain = await fetch(plain(), AGENT, CONFIG_DOCUMENT);
    overPlain.client.stream.end();
    assert.ok(overPlain.byName.has("api") && !overPlain.byName.has("api-client"), `documents: ${[...overPlain.byName.keys()].join(", ")}`);
    const overSecure = await fetch(secure(gatewayCert), AGENT, CONFIG_DOCUMENT);
    overSecure.client.stream.end();
    assert.equal(overSecure.byName.get("api-client")?.kind, "Secret", "a sidecar of the namespace, over the secure port, gets it");
  });

  it("an Envoy on an incremental (Delta) stream is served the same clusters, and the gateway its Secret over the secure port", async () => {
    const delta = (channel: grpc.Client, node: Record<string, unknown>, type: string, names: string[] = []) =>
      new Promise<Array<{ name: string; resource: { type_url: string; value: Uint8Array } }>>((resolve, reject) => {
        const stream = channel.makeBidiStreamRequest(
          "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources",
          (b: Buffer) => b,
          (b: Buffer) => b,
        );
        const response = envoyType("envoy.service.discovery.v3.DeltaDiscoveryResponse");
        stream.on("data", (b: Buffer) => {
          resolve(
            (
              response.toObject(response.decode(b), { defaults: true }) as {
                resources: Array<{ name: string; resource: { type_url: string; value: Uint8Array } }>;
              }
            ).resources,
          );
          stream.end();
        });
        stream.on("error", reject);
        const request = envoyType("envoy.service.discovery.v3.DeltaDiscoveryRequest");
        stream.write(Buffer.from(request.encode(request.fromObject({ node, type_url: type, resource_names_subscribe: names })).finish()));
      });
    const sotw = await fetch(plain(), SIDECAR, CLUSTER);
    sotw.client.stream.end();
    const clusters = await delta(plain(), SIDECAR, CLUSTER);
    assert.deepEqual(clusters.map((r) => r.name).sort(), [...sotw.byName.keys()].sort());
    for (const r of clusters) assert.equal(decodeAnyStrict(envoyRoot(), r.resource).object.name, r.name);
    const secrets = await delta(secure(gatewayCert), GATEWAY, SECRET, ["kubernetes://api-client"]);
    assert.deepEqual(
      secrets.map((r) => r.name),
      ["kubernetes://api-client"],
    );
  });

  it("the debug page shows the Secret's keys, not their values", async () => {
    const body = await (await fetch_(`http://${disco.listening.http}/debug/configz`)).text();
    const secret = (JSON.parse(body) as { resources: Array<{ kind: string; spec: { data: Record<string, string> } }> }).resources.find(
      (r) => r.kind === "Secret",
    )!;
    assert.deepEqual(secret.spec.data, { "tls.crt": "[redacted]", "tls.key": "[redacted]", "ca.crt": "[redacted]" });
    assert.doesNotMatch(body, /PRIVATE KEY/);
  });
});

const fetch_ = globalThis.fetch;
