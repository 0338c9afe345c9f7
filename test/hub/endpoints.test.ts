// `disco-agent proxy --endpoint FQDN:SERVICE_PORT=HOST:PORT[,sidecar][,sa=NAME]`
// (host/hub/clusters.ts, docs/sidecar.md "Security"): rows that must be
// accepted and rows that must be refused with a message quoting the spec,
// naming the rule and showing the expected form.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClusterSpecError, type EndpointFlag, endpointFlagServices, parseServiceEndpointSpec, parseServiceEndpoints } from "../../host/hub/clusters.ts";
import { serviceEndpoints } from "../../host/mesh/endpoints.ts";
import { buildRegistry } from "../../host/mesh/registry.ts";
import { decode } from "../config/table.ts";

const HTTPBIN = "httpbin.foo.svc.cluster.local";
const FORMS = " (expected FQDN:SERVICE_PORT=HOST:PORT[,sidecar][,sa=SERVICE_ACCOUNT][,label=KEY=VALUE…])";

describe("parseServiceEndpointSpec", () => {
  const accepted: Array<[string, Omit<EndpointFlag, "name"> & { name?: string }]> = [
    [
      `${HTTPBIN}:8000=10.0.0.7:15006,sidecar,sa=httpbin`,
      { host: HTTPBIN, servicePort: 8000, address: { host: "10.0.0.7", port: 15006 }, sidecar: true, serviceAccount: "httpbin" },
    ],
    [
      "legacy.legacy.svc.cluster.local:8000=10.0.0.9:8000",
      { host: "legacy.legacy.svc.cluster.local", servicePort: 8000, address: { host: "10.0.0.9", port: 8000 }, sidecar: false, serviceAccount: undefined },
    ],
    [
      `${HTTPBIN}:8000=127.0.0.1:41234,sidecar`,
      { host: HTTPBIN, servicePort: 8000, address: { host: "127.0.0.1", port: 41234 }, sidecar: true, serviceAccount: undefined },
    ],
    [
      `${HTTPBIN}:8000=127.0.0.1:41234,sa=httpbin`,
      { host: HTTPBIN, servicePort: 8000, address: { host: "127.0.0.1", port: 41234 }, sidecar: false, serviceAccount: "httpbin" },
    ],
    [
      `${HTTPBIN}:8000=127.0.0.1:41234,sa=httpbin,sidecar`,
      { host: HTTPBIN, servicePort: 8000, address: { host: "127.0.0.1", port: 41234 }, sidecar: true, serviceAccount: "httpbin" },
    ],
    [
      "httpbin.foo.svc:80=127.0.0.1:1,sa=sa.with-dots.1",
      { host: "httpbin.foo.svc", servicePort: 80, address: { host: "127.0.0.1", port: 1 }, sidecar: false, serviceAccount: "sa.with-dots.1" },
    ],
    [
      "HTTPBIN.Foo.svc.cluster.local:65535=localhost:65535",
      { host: HTTPBIN, servicePort: 65535, name: `${HTTPBIN}:65535`, address: { host: "localhost", port: 65535 }, sidecar: false, serviceAccount: undefined },
    ],
    [
      ` ${HTTPBIN}:8000 = 127.0.0.1:80 , sidecar , sa=httpbin `,
      { host: HTTPBIN, servicePort: 8000, address: { host: "127.0.0.1", port: 80 }, sidecar: true, serviceAccount: "httpbin" },
    ],
    [
      `${HTTPBIN}:8000=[::1]:15006,sidecar`,
      { host: HTTPBIN, servicePort: 8000, address: { host: "::1", port: 15006 }, sidecar: true, serviceAccount: undefined },
    ],
    [
      "www.example.org:443=93.184.216.34:443",
      { host: "www.example.org", servicePort: 443, address: { host: "93.184.216.34", port: 443 }, sidecar: false, serviceAccount: undefined },
    ],
    [
      "api:80=api.internal:8080,sidecar",
      { host: "api", servicePort: 80, address: { host: "api.internal", port: 8080 }, sidecar: true, serviceAccount: undefined },
    ],
    // Endpoints of one service port told apart by their workload labels (DestinationRule subsets select them).
    [
      "reviews.default.svc.cluster.local:9080=127.0.0.1:1,sidecar,label=version=v2",
      {
        host: "reviews.default.svc.cluster.local",
        servicePort: 9080,
        name: "reviews.default.svc.cluster.local:9080;version=v2",
        address: { host: "127.0.0.1", port: 1 },
        sidecar: true,
        serviceAccount: undefined,
      },
    ],
  ];
  for (const [spec, expected] of accepted) {
    it(`accepts ${JSON.stringify(spec)}`, () => {
      const e = parseServiceEndpointSpec(spec);
      assert.deepEqual(
        { host: e.host, servicePort: e.servicePort, name: e.name, address: e.address, sidecar: e.sidecar, serviceAccount: e.serviceAccount },
        { ...expected, name: expected.name ?? `${expected.host}:${expected.servicePort}` },
      );
      assert.ok(Object.isFrozen(e) && Object.isFrozen(e.address));
    });
  }

  const refused: Array<[string, string]> = [
    [`${HTTPBIN}:8000`, "no '=' between the service and its address"],
    [`${HTTPBIN}=127.0.0.1:80`, "the service port is missing (FQDN:SERVICE_PORT)"],
    [":8000=127.0.0.1:80", 'service host "" is not a DNS name'],
    ["http bin.foo:8000=127.0.0.1:80", 'service host "http bin.foo" is not a DNS name'],
    [`${HTTPBIN}:http=127.0.0.1:80`, 'service port "http" is not in 1..65535'],
    [`${HTTPBIN}:0=127.0.0.1:80`, 'service port "0" is not in 1..65535'],
    [`${HTTPBIN}:65536=127.0.0.1:80`, 'service port "65536" is not in 1..65535'],
    [`${HTTPBIN}:8000=`, "the address is empty"],
    [`${HTTPBIN}:8000=,sidecar`, "the address is empty"],
    [`${HTTPBIN}:8000=127.0.0.1`, "the port is missing"],
    [`${HTTPBIN}:8000=:80`, "the host is missing"],
    [`${HTTPBIN}:8000=127.0.0.1:0`, "port 0 is outside 1..65535"],
    [`${HTTPBIN}:8000=127.0.0.1:https`, 'port "https" is not a number'],
    [`${HTTPBIN}:8000=::1:80`, "an IPv6 address must be bracketed, as in [::1]:9091"],
    [`${HTTPBIN}:8000=https://127.0.0.1:80`, "no scheme is written before a TCP address (https://): use HOST:PORT"],
    [`${HTTPBIN}:8000=unix:///run/app.sock`, "the address must be HOST:PORT"],
    [`${HTTPBIN}:8000=a"b:80`, 'host "a\\"b" is not a DNS name or an IP address'],
    [`${HTTPBIN}:8000=127.0.0.1:80,`, 'unknown option ""'],
    [`${HTTPBIN}:8000=127.0.0.1:80,mtls`, 'unknown option "mtls"'],
    [`${HTTPBIN}:8000=127.0.0.1:80,Sidecar`, 'unknown option "Sidecar"'],
    [`${HTTPBIN}:8000=127.0.0.1:80,sa=`, 'unknown option "sa="'],
    [`${HTTPBIN}:8000=127.0.0.1:80,serviceAccount=httpbin`, 'unknown option "serviceAccount=httpbin"'],
    [`${HTTPBIN}:8000=127.0.0.1:80,sa=HttpBin`, 'sa="HttpBin" is not a service account name'],
    [`${HTTPBIN}:8000=127.0.0.1:80,sa=foo/sa/httpbin`, 'sa="foo/sa/httpbin" is not a service account name'],
    [`${HTTPBIN}:8000=127.0.0.1:80,sa=spiffe://cluster.local/ns/foo/sa/httpbin`, 'sa="spiffe://cluster.local/ns/foo/sa/httpbin" is not a service account name'],
    ["www.example.org:443=127.0.0.1:443,sidecar,sa=web", 'sa= needs a service host <service>.<namespace>.svc[.…] to name the identity, got "www.example.org"'],
    ["httpbin:8000=127.0.0.1:80,sa=httpbin", 'sa= needs a service host <service>.<namespace>.svc[.…] to name the identity, got "httpbin"'],
  ];
  for (const [spec, why] of refused) {
    it(`refuses ${JSON.stringify(spec)}`, () => {
      assert.throws(
        () => parseServiceEndpointSpec(spec),
        (e: unknown) => {
          assert.ok(e instanceof ClusterSpecError, String(e));
          assert.equal(e.code, "CLUSTER_SPEC_INVALID");
          assert.equal(e.message, `--endpoint ${JSON.stringify(spec)}: ${why}${FORMS}`);
          return true;
        },
      );
    });
  }
});

describe("parseServiceEndpoints", () => {
  it("keys the registry by host:servicePort; one service may have several ports", () => {
    const r = parseServiceEndpoints([
      `${HTTPBIN}:8000=127.0.0.1:1,sidecar,sa=httpbin`,
      `${HTTPBIN}:9000=127.0.0.1:2`,
      "legacy.legacy.svc.cluster.local:8000=127.0.0.1:3",
    ]);
    assert.deepEqual([...r.keys()], [`${HTTPBIN}:8000`, `${HTTPBIN}:9000`, "legacy.legacy.svc.cluster.local:8000"]);
    assert.equal(r.get(`${HTTPBIN}:9000`)?.address.port, 2);
    assert.equal(r.get(`${HTTPBIN}:8000`)?.serviceAccount, "httpbin");
  });

  it("refuses a service port given twice, whatever the case of the host", () => {
    assert.throws(() => parseServiceEndpoints([`${HTTPBIN}:8000=127.0.0.1:1`, `HTTPBIN.foo.svc.cluster.local:8000=127.0.0.1:2,sidecar`]), {
      message: `--endpoint "HTTPBIN.foo.svc.cluster.local:8000=127.0.0.1:2,sidecar": ${HTTPBIN}:8000 is already defined`,
    });
  });

  it("the first bad spec is reported", () => {
    assert.throws(() => parseServiceEndpoints([`${HTTPBIN}:8000=127.0.0.1:1`, `${HTTPBIN}:8001=127.0.0.1`]), {
      message: `--endpoint "${HTTPBIN}:8001=127.0.0.1": the port is missing${FORMS}`,
    });
  });

  it("no specs, an empty registry", () => {
    assert.equal(parseServiceEndpoints([]).size, 0);
  });
});

describe("--endpoint values in the registry (endpointFlagServices)", () => {
  const flags = parseServiceEndpoints([
    "httpbin.foo.svc.cluster.local:8000=127.0.0.1:41234,sidecar,sa=httpbin,label=version=v1",
    "httpbin.foo.svc.cluster.local:8000=127.0.0.2:41235",
    "reviews.default.svc.cluster.local:9080=127.0.0.3:41236,sidecar",
  ]).values();
  const documents = decode(`apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {selector: {app: reviews}, ports: [{name: http, port: 9080}]}
`);
  const registry = buildRegistry(documents.byKind, { domain: documents.domain, services: endpointFlagServices(flags) });

  it("a host the documents do not describe is a registry service whose endpoints are the flags'", () => {
    assert.deepEqual(
      serviceEndpoints(registry, "httpbin.foo.svc.cluster.local", 8000).map((e) => [e.address, e.port, e.sidecar, e.serviceAccount, e.labels.version]),
      [
        ["127.0.0.1", 41234, true, "httpbin", "v1"],
        ["127.0.0.2", 41235, false, undefined, undefined],
      ],
    );
    assert.deepEqual(
      serviceEndpoints(registry, "httpbin.foo.svc.cluster.local", 8000, { version: "v1" }).map((e) => e.address),
      ["127.0.0.1"],
    );
  });

  it("a documented Service keeps its ports and gains the flag's endpoint on the port of the same number", () => {
    const reviews = registry.services.find((s) => s.fqdn === "reviews.default.svc.cluster.local")!;
    assert.deepEqual(
      reviews.ports.map((p) => [p.name, p.port]),
      [["http", 9080]],
    );
    assert.deepEqual(
      serviceEndpoints(registry, "reviews.default.svc.cluster.local", 9080).map((e) => [e.address, e.port, e.sidecar]),
      [["127.0.0.3", 41236, true]],
    );
  });
});
