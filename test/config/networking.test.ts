import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decode, tableTest } from "./table.ts";

describe("DestinationRule", () => {
  // Spec rules 5 and 6: MESH_MUTUAL for the service, a port-level override on the service port.
  const baseline = `
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: httpbin, namespace: foo }
spec:
  host: httpbin.foo.svc.cluster.local
  trafficPolicy:
    tls: { mode: MESH_MUTUAL }
    portLevelSettings:
      - port: { number: 8000 }
        tls: { mode: DISABLE }
`;
  tableTest(
    baseline,
    [
      ["a short host resolves in the rule's namespace", { "spec.host": "httpbin" }, "ok", (s) => assert.equal(s.fqdn, "httpbin.foo.svc.cluster.local")],
      ["a wildcard host", { "spec.host": "*.foo.svc.cluster.local" }, "ok", (s) => assert.equal(s.fqdn, "*.foo.svc.cluster.local")],
      ["an external DNS name", { "spec.host": "api.example.com" }, "ok"],
      ["mode DISABLE", { "spec.trafficPolicy.tls.mode": "DISABLE" }, "ok"],
      ["mode SIMPLE (upstream)", { "spec.trafficPolicy.tls.mode": "SIMPLE" }, "ok"],
      [
        "mode MUTUAL with certificate and key",
        { "spec.trafficPolicy.tls": { mode: "MUTUAL", clientCertificate: "/etc/certs/c.pem", privateKey: "/etc/certs/k.pem" } },
        "ok",
      ],
      ["mode MUTUAL with a credential", { "spec.trafficPolicy.tls": { mode: "MUTUAL", credentialName: "client-cred" } }, "ok"],
      ["no trafficPolicy", { "spec.trafficPolicy": undefined }, "ok", (s) => assert.equal(s.trafficPolicy, undefined)],
      [
        "port-level without tls",
        { "spec.trafficPolicy.portLevelSettings": [{ port: { number: 9000 } }] },
        "ok",
        (s) => assert.equal(s.trafficPolicy.portLevelSettings[0].tls, undefined),
      ],
      [
        "subsets",
        {
          "spec.subsets": [
            { name: "v1", labels: { version: "v1" } },
            { name: "v2", labels: { version: "v2" }, trafficPolicy: { tls: { mode: "DISABLE" } } },
          ],
        },
        "ok",
        (s) => assert.equal(s.subsets[1].trafficPolicy.tls.mode, "DISABLE"),
      ],
      ["exportTo", { "spec.exportTo": [".", "bar"] }, "ok"],
      ["missing host", { "spec.host": undefined }, ["spec.host", /expected a string, got nothing/]],
      ["host with an underscore", { "spec.host": "http_bin.foo" }, ["spec.host", /DNS name/]],
      ["host with a * in the middle", { "spec.host": "foo.*.local" }, ["spec.host", /DNS name/]],
      [
        "ISTIO_MUTUAL is called MESH_MUTUAL here",
        { "spec.trafficPolicy.tls.mode": "ISTIO_MUTUAL" },
        ["spec.trafficPolicy.tls.mode", /one of DISABLE, SIMPLE, MUTUAL, MESH_MUTUAL/],
      ],
      ["MUTUAL without certificate", { "spec.trafficPolicy.tls": { mode: "MUTUAL" } }, ["spec.trafficPolicy.tls", /clientCertificate and privateKey/]],
      [
        "port 0",
        { "spec.trafficPolicy.portLevelSettings.0.port.number": 0 },
        ["spec.trafficPolicy.portLevelSettings[0].port.number", /integer from 1 to 65535/],
      ],
      [
        "port as a name",
        { "spec.trafficPolicy.portLevelSettings.0.port.number": "http" },
        ["spec.trafficPolicy.portLevelSettings[0].port.number", /integer from 1 to 65535, got "http"/],
      ],
      [
        "duplicate port",
        { "spec.trafficPolicy.portLevelSettings.1": { port: { number: 8000 } } },
        ["spec.trafficPolicy.portLevelSettings[1].port.number", /duplicate port 8000/],
      ],
      [
        "bad port-level mode",
        { "spec.trafficPolicy.portLevelSettings.0.tls.mode": "OFF" },
        ["spec.trafficPolicy.portLevelSettings[0].tls.mode", /one of DISABLE/],
      ],
      ["duplicate subset", { "spec.subsets": [{ name: "v1" }, { name: "v1" }] }, ["spec.subsets[1].name", /duplicate subset name "v1"/]],
      ["subset label key", { "spec.subsets": [{ name: "v1", labels: { "bad key": "x" } }] }, ["spec.subsets[0].labels[bad key]", /label key/]],
      ["exportTo with a bad namespace", { "spec.exportTo": ["Bar"] }, ["spec.exportTo[0]", /namespace name/]],
    ],
    (s) => {
      assert.equal(s.host, "httpbin.foo.svc.cluster.local");
      assert.equal(s.trafficPolicy.tls.mode, "MESH_MUTUAL");
      assert.deepEqual(
        s.trafficPolicy.portLevelSettings.map((p: any) => [p.port, p.tls.mode]),
        [[8000, "DISABLE"]],
      );
    },
  );
});

describe("Gateway", () => {
  const baseline = `
apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata: { name: httpbin-gateway, namespace: foo }
spec:
  selector: { mesh: ingressgateway }
  servers:
    - port: { number: 80, name: http, protocol: HTTP }
      hosts: ["*"]
`;
  tableTest(
    baseline,
    [
      ["namespaced hosts", { "spec.servers.0.hosts": ["foo/httpbin.example.com", "./a.example.com", "*/b.example.com", "*.example.com"] }, "ok"],
      ["lower-case protocol is stored upper case", { "spec.servers.0.port.protocol": "http" }, "ok", (s) => assert.equal(s.servers[0].port.protocol, "HTTP")],
      [
        "HTTPS with a credential",
        { "spec.servers.0.port": { number: 443, name: "https", protocol: "HTTPS" }, "spec.servers.0.tls": { mode: "SIMPLE", credentialName: "cert" } },
        "ok",
      ],
      ["httpsRedirect", { "spec.servers.0.tls": { httpsRedirect: true } }, "ok", (s) => assert.equal(s.servers[0].tls.httpsRedirect, true)],
      ["no selector", { "spec.selector": undefined }, "ok", (s) => assert.deepEqual(s.selector, {})],
      ["no servers", { "spec.servers": [] }, ["spec.servers", /non-empty list/]],
      ["server without hosts", { "spec.servers.0.hosts": undefined }, ["spec.servers[0].hosts", /non-empty list/]],
      ["unknown protocol", { "spec.servers.0.port.protocol": "QUIC" }, ["spec.servers[0].port.protocol", /one of HTTP, HTTPS/]],
      ["port without name", { "spec.servers.0.port.name": undefined }, ["spec.servers[0].port.name", /expected a string, got nothing/]],
      ["port 70000", { "spec.servers.0.port.number": 70000 }, ["spec.servers[0].port.number", /integer from 1 to 65535/]],
      ["HTTPS without tls", { "spec.servers.0.port.protocol": "HTTPS" }, ["spec.servers[0].tls", /TLS settings for a HTTPS server/]],
      ["bad host", { "spec.servers.0.hosts": ["bad host"] }, ["spec.servers[0].hosts[0]", /\[namespace\/\]host/]],
      ["bad namespace in host", { "spec.servers.0.hosts": ["Foo/a.example.com"] }, ["spec.servers[0].hosts[0]", /namespace/]],
      ["selector label value", { "spec.selector": { mesh: "-x" } }, ["spec.selector[mesh]", /label value/]],
    ],
    (s) => {
      assert.deepEqual(s.selector, { mesh: "ingressgateway" });
      assert.deepEqual(s.servers[0].port, { number: 80, name: "http", protocol: "HTTP" });
      assert.deepEqual(s.servers[0].hosts, ["*"]);
    },
  );
});

describe("VirtualService", () => {
  const baseline = `
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: { name: httpbin, namespace: foo }
spec:
  hosts: ["*"]
  gateways: [httpbin-gateway]
  http:
    - route:
        - destination:
            host: httpbin.foo.svc.cluster.local
            port: { number: 8000 }
`;
  const dest = "spec.http.0.route.0.destination";
  tableTest(
    baseline,
    [
      [
        "short destination host resolves",
        { [`${dest}.host`]: "httpbin" },
        "ok",
        (s) => assert.equal(s.http[0].route[0].destination.fqdn, "httpbin.foo.svc.cluster.local"),
      ],
      ["mesh gateway with a named host", { "spec.hosts": ["httpbin.foo.svc.cluster.local"], "spec.gateways": ["mesh"] }, "ok"],
      ["no gateways with a named host", { "spec.hosts": ["httpbin"], "spec.gateways": undefined }, "ok", (s) => assert.deepEqual(s.gateways, [])],
      ["namespaced gateway", { "spec.gateways": ["mesh-system/ingress"] }, "ok"],
      ["destination without port", { [`${dest}.port`]: undefined }, "ok", (s) => assert.equal(s.http[0].route[0].destination.port, undefined)],
      ["subset", { [`${dest}.subset`]: "v1" }, "ok"],
      ["empty labels on a destination", { [`${dest}.labels`]: {} }, "ok"],
      ["weights adding up to 100", { "spec.http.0.route.1": { destination: { host: "b" }, weight: 25 }, "spec.http.0.route.0.weight": 75 }, "ok"],
      [
        "labels on a destination (MeshService rule)",
        { [`${dest}.labels`]: { version: "v1" } },
        [`spec.http[0].route[0].destination.labels`, /no labels on a VirtualService destination/],
      ],
      ["* host bound to the mesh gateway", { "spec.gateways": ["mesh"] }, ["spec.hosts", /no "\*" host on a VirtualService bound to the mesh gateway/]],
      ["* host without gateways", { "spec.gateways": undefined }, ["spec.hosts", /mesh gateway/]],
      ["no hosts and a gateway", { "spec.hosts": [] }, ["spec.gateways", /no gateways on a delegate VirtualService/]],
      [
        "no hosts, no gateways: a delegate",
        { "spec.hosts": undefined, "spec.gateways": undefined },
        "ok",
        (s) => assert.deepEqual([s.hosts, s.fqdns], [[], []]),
      ],
      ["destination without host", { [`${dest}.host`]: undefined }, [`spec.http[0].route[0].destination.host`, /expected a string/]],
      ["destination host *", { [`${dest}.host`]: "*" }, [`spec.http[0].route[0].destination.host`, /lone `\*` is not allowed/]],
      ["destination port 0", { [`${dest}.port.number`]: 0 }, [`spec.http[0].route[0].destination.port.number`, /integer from 1 to 65535/]],
      ["route without destination", { "spec.http.0.route.0": { weight: 100 } }, ["spec.http[0].route[0].destination", /an object with host/]],
      ["empty route", { "spec.http.0.route": [] }, ["spec.http[0].route", /non-empty list/]],
      [
        "weights not adding up",
        { "spec.http.0.route.1": { destination: { host: "b" }, weight: 20 }, "spec.http.0.route.0.weight": 70 },
        ["spec.http[0].route", /add up to 100/],
      ],
      ["bad gateway name", { "spec.gateways": ["Bad_Gateway"] }, ["spec.gateways[0]", /Gateway name/]],
    ],
    (s) => {
      assert.deepEqual(s.hosts, ["*"]);
      assert.deepEqual(s.gateways, ["httpbin-gateway"]);
      assert.deepEqual(s.http[0].route[0].destination, {
        host: "httpbin.foo.svc.cluster.local",
        fqdn: "httpbin.foo.svc.cluster.local",
        subset: undefined,
        port: 8000,
      });
    },
  );
});

describe("ServiceEntry", () => {
  const baseline = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: api, namespace: foo }
spec:
  hosts: [api.example.com]
  ports: [{ number: 443, name: tls, protocol: TLS }]
  resolution: DNS
`;
  tableTest(
    baseline,
    [
      [
        "DNS with endpoints named by DNS",
        { "spec.endpoints": [{ address: "a.example.com" }, { address: "b.example.com", weight: 2 }] },
        "ok",
        (s) =>
          assert.deepEqual(
            s.endpoints.map((e: any) => e.address),
            ["a.example.com", "b.example.com"],
          ),
      ],
      ["DNS_ROUND_ROBIN", { "spec.resolution": "DNS_ROUND_ROBIN" }, "ok", (s) => assert.equal(s.resolution, "DNS_ROUND_ROBIN")],
      ["an empty port protocol is TCP (upstream accepts it)", { "spec.ports.0.protocol": "" }, "ok", (s) => assert.equal(s.ports[0].protocol, "TCP")],
      ["a protocol in another case", { "spec.ports.0.protocol": "tls" }, "ok", (s) => assert.equal(s.ports[0].protocol, "TLS")],
      ["a wildcard host with DNS and endpoints", { "spec.hosts": ["*.example.com"], "spec.endpoints": [{ address: "gw.example.com" }] }, "ok"],
      ["a wildcard host with NONE", { "spec.hosts": ["*.example.com"], "spec.resolution": "NONE" }, "ok"],
      [
        "a wildcard host with DNS and no endpoints (upstream: hosts must be FQDN)",
        { "spec.hosts": ["*.example.com"] },
        ["spec.hosts", /without wildcards with resolution DNS and no endpoints/],
      ],
      [
        "a wildcard host with DNS_ROUND_ROBIN and no endpoints",
        { "spec.hosts": ["*.example.com"], "spec.resolution": "DNS_ROUND_ROBIN" },
        ["spec.hosts", /resolution DNS_ROUND_ROBIN and no endpoints/],
      ],
    ],
    (s) => assert.equal(s.resolution, "DNS"),
  );

  it("DNS_ROUND_ROBIN with several endpoints is accepted with a warning: only the first is resolved", () => {
    const c = decode(baseline.replace("resolution: DNS", "resolution: DNS_ROUND_ROBIN\n  endpoints: [{ address: a.example.com }, { address: b.example.com }]"));
    assert.deepEqual(c.errors, []);
    assert.equal(c.resources.length, 1);
    assert.equal(c.warnings.length, 1);
    assert.equal(c.warnings[0].fieldPath, "spec.endpoints");
    assert.match(c.warnings[0].message, /only the first endpoint is used with resolution DNS_ROUND_ROBIN/);
  });
});
