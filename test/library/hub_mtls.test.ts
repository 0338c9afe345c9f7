// The embedded filter reaching a `hubs server` that serves mutual TLS
// (options.hub.tls): workload certificates from a real mesh_ca, the hub's
// SPIFFE identity checked instead of its host name.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { HUBS_BIN } from "../../host/demo/binaries.ts";
import { type MeshCa, startMeshCa, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { createFilter } from "../../host/library/index.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";

const CONFIG = [
  {
    apiVersion: "config.mesh.io/v1alpha2",
    kind: "HttpClientConfig",
    metadata: { name: "app", namespace: "demo" },
    spec: { defaultDestinationService: "petstore.demo.svc.cluster.local", transport: { networkFailPolicy: { policy: "FAIL_CLOSE", maxRetry: 0 } } },
  },
  {
    apiVersion: "config.mesh.io/v1alpha2",
    kind: "HTTPAPISpec",
    metadata: { name: "petstore", namespace: "demo" },
    spec: { patterns: [{ httpMethod: "GET", uriTemplate: "/pets/{id}" }] },
  },
  {
    apiVersion: "config.mesh.io/v1alpha2",
    kind: "HTTPAPISpecBinding",
    metadata: { name: "petstore", namespace: "demo" },
    spec: { services: [{ name: "petstore" }], apiSpecs: [{ name: "petstore" }] },
  },
];

describe("the embedded filter and a hub serving mutual TLS", () => {
  let ca: MeshCa;
  let hub: Daemon<{ grpcPort: number }>;
  let app: Awaited<ReturnType<typeof writeWorkloadCertFiles>>;
  const dir = tempDir("mesh-library-mtls-");

  before(async () => {
    ca = await startMeshCa();
    const hubFiles = await writeWorkloadCertFiles(ca, "mesh-system", "mesh-hub-service-account", join(dir, "hub"));
    app = await writeWorkloadCertFiles(ca, "demo", "petstore", join(dir, "app"));
    hub = await startDaemon(
      HUBS_BIN,
      [
        "server",
        "--address",
        "tcp://127.0.0.1:0",
        "--monitoringPort",
        "0",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
        "--caCertFile",
        hubFiles.caCertFile,
        "--certFile",
        hubFiles.certFile,
        "--keyFile",
        hubFiles.keyFile,
      ],
      "hubs listening ",
    );
  });

  after(async () => {
    await hub?.stop();
    await ca?.stop();
  });

  it("checks over mutual TLS when the hub proves the expected identity", async () => {
    const filter = await createFilter({
      config: CONFIG,
      hub: {
        address: `127.0.0.1:${hub.listening.grpcPort}`,
        tls: { caFile: app.caCertFile, certFile: app.certFile, keyFile: app.keyFile, hubIdentity: "sa/mesh-hub-service-account" },
      },
    });
    try {
      const decision = await filter.check({ method: "GET", path: "/pets/1" });
      assert.equal(decision.allowed, true, decision.body);
      decision.report();
      assert.equal(filter.stats()["hub_transport.calls"], 1, "the check went to the hub");
      assert.equal(filter.stats()["hub_transport.failed_calls"], 0);
    } finally {
      await filter.close();
    }
  });

  it("refuses a hub proving another identity: the call fails and FAIL_CLOSE answers 503", async () => {
    const filter = await createFilter({
      config: CONFIG,
      hub: {
        address: `127.0.0.1:${hub.listening.grpcPort}`,
        tls: { caFile: app.caCertFile, certFile: app.certFile, keyFile: app.keyFile, hubIdentity: "sa/someone-else" },
      },
      log: () => {},
    });
    try {
      const decision = await filter.check({ method: "GET", path: "/pets/1" });
      assert.equal(decision.allowed, false);
      assert.equal(decision.status, 503);
      assert.match(decision.body, /^UNAVAILABLE:/);
      decision.report();
      assert.equal(filter.stats()["hub_transport.failed_calls"], 1);
    } finally {
      await filter.close();
    }
  });

  it("a hub dialled in plain text while it serves TLS fails the same way", async () => {
    const filter = await createFilter({ config: CONFIG, hub: `127.0.0.1:${hub.listening.grpcPort}`, log: () => {} });
    try {
      const decision = await filter.check({ method: "GET", path: "/pets/1" });
      assert.equal(decision.status, 503);
      decision.report();
    } finally {
      await filter.close();
    }
  });
});
