import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { messageType } from "../../host/wire/protos.ts";
import { T0, configFile, hubEval } from "./hub_eval_support.ts";

const SERVICE = "ratings.shop.svc.cluster.local";

function clientConfig(ignoreForwarded: boolean): string {
  return `
apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: { name: sidecar, namespace: shop }
spec:
  ignoreForwardedAttributes: ${ignoreForwarded}
  hubAttributes:
    attributes:
      source.namespace: { stringValue: static-filter }
      destination.uid: { stringValue: filter-uid }
      context.reporter.kind: { stringValue: inbound }
      request.host: { stringValue: static-host }
  forwardAttributes:
    attributes:
      source.uid: { stringValue: kubernetes://ratings-v1.shop }
  serviceConfigs:
    ${SERVICE}:
      hubAttributes:
        attributes:
          destination.uid: { stringValue: route-uid }
          destination.service.host: { stringValue: ${SERVICE} }
      forwardAttributes:
        attributes:
          source.uid: { stringValue: kubernetes://ratings-v2.shop }
          destination.service.name: { stringValue: ratings }
`;
}

/** An `x-mesh-attributes` value as a client proxy would send it. */
function forwardedHeader(attributes: Record<string, object>): string {
  const type = messageType("mesh.hub.v1.Attributes");
  return Buffer.from(type.encode(type.fromObject({ attributes })).finish()).toString("base64");
}

const spoofing = forwardedHeader({
  "source.namespace": { stringValue: "forwarded-ns" },
  "source.uid": { stringValue: "kubernetes://caller.other" },
  "destination.service.host": { stringValue: "forwarded-host" },
  "source.principal": { stringValue: "cluster.local/ns/admin/sa/root" },
  "destination.service.name": { int64Value: 7 },
  "destination.service.uid": { stringValue: "" },
});

const request = (extra: object = {}) => ({
  method: "GET",
  path: "/r?x=1",
  host: "ratings",
  destinationService: SERVICE,
  time: T0,
  headers: { "x-mesh-attributes": spoofing, "user-agent": "curl/8" },
  ...extra,
});

describe("meshctl x hub-eval: order of application of attributes", async () => {
  const honoured = await hubEval(
    [configFile(clientConfig(false))],
    [
      request(),
      request({ connection: { mtls: true, peerPrincipal: "spiffe://cluster.local/ns/reviews/sa/reviews" } }),
      request({ headers: { "x-mesh-attributes": "not base64!", "user-agent": "curl/8" } }),
    ],
  );
  const ignored = await hubEval([configFile(clientConfig(true))], [request()]);
  const [plain, withPeer, malformed] = honoured.lines;

  it("route attributes replace filter attributes", async () => {
    assert.equal(honoured.status, 0, honoured.stderr);
    assert.deepEqual(plain.attributes["destination.uid"], { stringValue: "route-uid" });
    assert.deepEqual(plain.attributes["context.reporter.kind"], { stringValue: "inbound" });
  });
  it("forwarded attributes replace static ones", async () => {
    assert.deepEqual(plain.attributes["source.namespace"], { stringValue: "forwarded-ns" });
    assert.deepEqual(plain.attributes["source.uid"], { stringValue: "kubernetes://caller.other" });
    assert.deepEqual(plain.attributes["destination.service.host"], { stringValue: "forwarded-host" });
  });
  it("only allow-listed, non-empty string attributes are taken from the header", async () => {
    assert.equal(plain.attributes["source.principal"], undefined);
    assert.equal(plain.attributes["destination.service.name"], undefined);
    assert.equal(plain.attributes["destination.service.uid"], undefined);
  });
  it("request-derived attributes replace forwarded and static ones", async () => {
    assert.deepEqual(plain.attributes["request.host"], { stringValue: "ratings" });
    assert.deepEqual(withPeer.attributes["source.namespace"], { stringValue: "reviews" });
    assert.deepEqual(withPeer.attributes["source.principal"], { stringValue: "cluster.local/ns/reviews/sa/reviews" });
  });
  it("a malformed header is ignored", async () => {
    assert.deepEqual(malformed.attributes["source.namespace"], { stringValue: "static-filter" });
  });
  it("ignoreForwardedAttributes keeps the header out of the bag", async () => {
    assert.deepEqual(ignored.lines[0].attributes["source.namespace"], { stringValue: "static-filter" });
    assert.deepEqual(ignored.lines[0].attributes["destination.service.host"], { stringValue: SERVICE });
  });
  it("the header never reaches request.headers", async () => {
    for (const line of [plain, ignored.lines[0]]) {
      const headers = line.attributes["request.headers"].stringMapValue.entries;
      assert.equal(headers["x-mesh-attributes"], undefined);
      assert.equal(headers["user-agent"], "curl/8");
    }
  });
  it("outgoing forwarded attributes merge filter and route forwardAttributes, route winning", async () => {
    assert.deepEqual(plain.forwardedAttributes, {
      "destination.service.name": { stringValue: "ratings" },
      "source.uid": { stringValue: "kubernetes://ratings-v2.shop" },
    });
  });
});

describe("meshctl x hub-eval: request-derived attributes", async () => {
  const run = await hubEval(
    [configFile(clientConfig(false))],
    [
      {
        method: "POST",
        path: "/a/b?x=1&y&x=2",
        host: "ratings:9080",
        scheme: "https",
        time: "2026-11-22T10:00:00.123456Z",
        destinationService: SERVICE,
        headers: { "Content-Type": "application/grpc", Referer: "https://r/", "X-Request-Id": "rid-1", "content-length": "42" },
        connection: {
          sourceIp: "2001:db8::7",
          sourcePort: 443,
          destinationIp: "10.0.0.9",
          destinationPort: 9080,
          mtls: true,
          peerPrincipal: "cluster.local/ns/frontend/sa/web",
          localPrincipal: "spiffe://cluster.local/ns/shop/sa/ratings",
          requestedServerName: "outbound_.9080_._.ratings.shop.svc.cluster.local",
        },
        auth: { iss: "https://issuer", sub: "alice", aud: ["web", "api"], azp: "spa", scope: "read write", n: 3 },
      },
    ],
  );
  const a = run.lines[0]?.attributes ?? {};
  const rows: Array<[string, object | undefined]> = [
    ["request.method", { stringValue: "POST" }],
    ["request.path", { stringValue: "/a/b?x=1&y&x=2" }],
    ["request.url_path", { stringValue: "/a/b" }],
    ["request.query_params", { stringMapValue: { entries: { x: "1", y: "" } } }],
    ["request.host", { stringValue: "ratings:9080" }],
    ["request.scheme", { stringValue: "https" }],
    ["request.referer", { stringValue: "https://r/" }],
    ["request.id", { stringValue: "rid-1" }],
    ["request.size", { int64Value: "42" }],
    ["request.time", { timestampValue: "2026-11-22T10:00:00.123456Z" }],
    ["context.protocol", { stringValue: "grpc" }],
    ["source.ip", { bytesValue: Buffer.from("20010db8000000000000000000000007", "hex").toString("base64") }],
    ["origin.ip", { bytesValue: Buffer.from("20010db8000000000000000000000007", "hex").toString("base64") }],
    ["source.port", { int64Value: "443" }],
    ["destination.ip", { bytesValue: Buffer.from([10, 0, 0, 9]).toString("base64") }],
    ["destination.port", { int64Value: "9080" }],
    ["connection.mtls", { boolValue: true }],
    ["connection.requested_server_name", { stringValue: "outbound_.9080_._.ratings.shop.svc.cluster.local" }],
    ["source.principal", { stringValue: "cluster.local/ns/frontend/sa/web" }],
    ["source.user", { stringValue: "cluster.local/ns/frontend/sa/web" }],
    ["source.namespace", { stringValue: "frontend" }],
    ["destination.principal", { stringValue: "cluster.local/ns/shop/sa/ratings" }],
    ["request.auth.principal", { stringValue: "https://issuer/alice" }],
    ["request.auth.audiences", { stringValue: "web" }],
    ["request.auth.presenter", { stringValue: "spa" }],
    ["request.auth.claims", { stringMapValue: { entries: { aud: "web,api", azp: "spa", iss: "https://issuer", scope: "read,write", sub: "alice" } } }],
  ];
  for (const [name, expected] of rows) it(name, () => assert.deepEqual(a[name], expected));
  it("request.auth.raw_claims is the payload text", async () => {
    assert.deepEqual(JSON.parse(a["request.auth.raw_claims"].stringValue).sub, "alice");
  });
  it("every attribute has exactly one typed value", async () => {
    for (const [name, value] of Object.entries(a)) assert.equal(Object.keys(value as object).length, 1, name);
  });
});
