// --cluster NAME=ADDRESS parsing: rows that must be accepted and rows that
// must be refused with a message naming the spec and the rule.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClusterSpecError, parseClusterSpec, parseClusters } from "../../host/hub/clusters.ts";

describe("parseClusterSpec", () => {
  const accepted: Array<[string, { name: string; target: string; address: object }]> = [
    ["hub_server=127.0.0.1:9091", { name: "hub_server", target: "127.0.0.1:9091", address: { kind: "tcp", host: "127.0.0.1", port: 9091 } }],
    ["hub_server=localhost:1", { name: "hub_server", target: "localhost:1", address: { kind: "tcp", host: "localhost", port: 1 } }],
    [
      "reports.v2=hub.mesh-system.svc.cluster.local:65535",
      {
        name: "reports.v2",
        target: "hub.mesh-system.svc.cluster.local:65535",
        address: { kind: "tcp", host: "hub.mesh-system.svc.cluster.local", port: 65535 },
      },
    ],
    ["v6=[::1]:9091", { name: "v6", target: "[::1]:9091", address: { kind: "tcp", host: "::1", port: 9091 } }],
    [" hub_server = 10.0.0.1:80 ", { name: "hub_server", target: "10.0.0.1:80", address: { kind: "tcp", host: "10.0.0.1", port: 80 } }],
    ["local=unix:///run/hub/grpc.sock", { name: "local", target: "unix:///run/hub/grpc.sock", address: { kind: "unix", path: "/run/hub/grpc.sock" } }],
  ];
  for (const [spec, expected] of accepted) {
    it(`accepts ${JSON.stringify(spec)}`, () => {
      const c = parseClusterSpec(spec);
      assert.deepEqual({ name: c.name, target: c.target, address: c.address }, expected);
      assert.ok(Object.isFrozen(c));
    });
  }

  it("several addresses: hub replicas, taken round robin; the first is the cluster's address", () => {
    const c = parseClusterSpec("hub_server=127.0.0.1:9091, [::1]:9092,unix:///run/hub.sock");
    assert.deepEqual(
      c.endpoints.map((e) => e.target),
      ["127.0.0.1:9091", "[::1]:9092", "unix:///run/hub.sock"],
    );
    assert.deepEqual(c.endpoints[1].address, { kind: "tcp", host: "::1", port: 9092 });
    assert.equal(c.target, "127.0.0.1:9091");
    assert.ok(Object.isFrozen(c.endpoints));
  });

  const refused: Array<[string, RegExp]> = [
    ["127.0.0.1:9091", /no '=' between/],
    ["=127.0.0.1:9091", /cluster name is empty/],
    ["hub server=127.0.0.1:9091", /may only contain/],
    ["hub_server=", /address is empty/],
    ["hub_server=127.0.0.1", /port is missing/],
    ["hub_server=:9091", /host is missing/],
    ["hub_server=127.0.0.1:http", /port "http" is not a number/],
    ["hub_server=127.0.0.1:0", /port 0 is outside 1\.\.65535/],
    ["hub_server=127.0.0.1:70000", /port 70000 is outside/],
    ["hub_server=::1:9091", /IPv6 address must be bracketed/],
    ["hub_server=tcp://127.0.0.1:9091", /no scheme is written before a TCP address \(tcp:\/\/\): use HOST:PORT/],
    ["hub_server=hub_!:9091", /host "hub_!" is not a DNS name/],
    ["hub_server=unix:/run/hub.sock", /written unix:\/\/\/PATH/],
    ["hub_server=unix://run/hub.sock", /must be absolute/],
    ["hub_server=unix:///", /path is empty/],
    ["hub_server=127.0.0.1:1,", /address 2 of 2 is empty/],
    ["hub_server=127.0.0.1:1,127.0.0.1:x", /"127\.0\.0\.1:x": port "x" is not a number/],
    ["hub_server=127.0.0.1:1,127.0.0.1:1", /address 127\.0\.0\.1:1 is given twice/],
  ];
  for (const [spec, why] of refused) {
    it(`refuses ${JSON.stringify(spec)}`, () => {
      assert.throws(
        () => parseClusterSpec(spec),
        (e: unknown) => {
          assert.ok(e instanceof ClusterSpecError);
          assert.equal(e.code, "CLUSTER_SPEC_INVALID");
          assert.ok(e.message.startsWith(`--cluster ${JSON.stringify(spec)}: `), e.message);
          assert.match(e.message, why);
          assert.match(e.message, /expected NAME=HOST:PORT or NAME=unix:\/\/\/PATH/);
          return true;
        },
      );
    });
  }
});

describe("parseClusters", () => {
  it("maps names to clusters; hub_server is an ordinary name", () => {
    const clusters = parseClusters(["hub_server=127.0.0.1:9091", "reports=unix:///tmp/r.sock"]);
    assert.deepEqual([...clusters.keys()], ["hub_server", "reports"]);
    assert.equal(clusters.get("reports")?.target, "unix:///tmp/r.sock");
  });

  it("refuses a name given twice, naming both", () => {
    assert.throws(
      () => parseClusters(["hub_server=127.0.0.1:1", "hub_server=127.0.0.1:2"]),
      /--cluster "hub_server=127.0.0.1:2": cluster "hub_server" is already defined as 127.0.0.1:1/,
    );
  });

  it("no specs, no clusters", () => {
    assert.equal(parseClusters([]).size, 0);
  });
});
