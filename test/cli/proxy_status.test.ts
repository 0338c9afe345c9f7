import assert from "node:assert/strict";
import { type Server, createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import type { LocalMesh } from "../../host/demo/local_mesh.ts";
import { meshctl } from "./cli_golden_support.ts";
import { meshctlAsync, startPolicyMesh } from "./sidecar_cli_support.ts";

// `meshctl proxy-status`: SYNCED / NOT READY from each sidecar's /ready and a
// summary of its /config_dump; no control plane, so no xDS columns.

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

describe("proxy-status", async () => {
  let mesh: LocalMesh;
  /** An admin port that answers /ready with 503 (a sidecar draining or without configuration). */
  let notReady: Server;
  let notReadyPort: number;
  /** A port nothing listens on. */
  let closedPort: number;
  before(async () => {
    mesh = await startPolicyMesh();
    notReady = createServer((req, res) => {
      if (req.url === "/ready") return res.writeHead(503).end("NOT READY\n");
      if (req.url === "/config_dump") {
        return res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ identity: { id: "reviews-v1.demo" }, listeners: {}, configuration: { files: [], filter: null } }));
      }
      res.writeHead(404).end();
    });
    notReadyPort = await listen(notReady);
    const closed = createServer();
    closedPort = await listen(closed);
    await new Promise((r) => closed.close(r));
  });
  after(async () => {
    await mesh?.stop();
    notReady?.close();
  });

  test("a sidecar with its configuration applied is SYNCED, with a summary; the xDS column says why it is n/a", async () => {
    const run = await meshctlAsync(["proxy-status", "--admin", mesh.adminUrl]);
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.split("\n");
    assert.match(lines[0], /^NAME\s+STATUS\s+LISTENERS\s+ROUTES\s+CLUSTERS\s+RESOURCES\s+FILES\s+XDS\s+ADMIN$/);
    // 3 listeners (inbound, outbound, admin), 2 virtual hosts, 1 cluster (the hub), 8 resources, 1 file.
    assert.deepEqual(lines[1].split(/\s{3,}/), ["petstore-v1.demo", "SYNCED", "3", "2", "1", "8", "1", "n/a", mesh.adminUrl]);
    assert.equal(lines[2], "");
    assert.equal(
      lines[3],
      "XDS: no control plane here (no --debugAddress): xDS sync (CDS, LDS, EDS, RDS) is disco-discovery's to report; give its debug address with --debugAddress",
    );
  });

  test("several sidecars: NOT READY and UNREACHABLE rows make the exit code 1; -o json", async () => {
    const run = await meshctlAsync(["ps", "--admin", mesh.adminUrl, "--admin", String(notReadyPort), "--admin", `127.0.0.1:${closedPort}`, "-o", "json"]);
    assert.equal(run.status, 1);
    const out = JSON.parse(run.stdout);
    assert.deepEqual(
      out.proxies.map((p: { name: string; status: string }) => [p.name, p.status]),
      [
        ["petstore-v1.demo", "SYNCED"],
        ["reviews-v1.demo", "NOT READY"],
        [`http://127.0.0.1:${closedPort}`, "UNREACHABLE"],
      ],
    );
    assert.equal(out.proxies[1].detail, "NOT READY");
    assert.match(out.proxies[2].detail, /unreachable \(ECONNREFUSED\)/);
    assert.match(out.xds, /no control plane here/);
  });

  test("pod arguments select sidecars by identity; a pod no sidecar is is an error", async () => {
    const one = await meshctlAsync(["proxy-status", "petstore-v1", "--admin", mesh.adminUrl, "--admin", String(notReadyPort)]);
    assert.equal(one.status, 0, one.stderr);
    assert.match(one.stdout, /\npetstore-v1\.demo\s+SYNCED/);
    assert.doesNotMatch(one.stdout, /reviews-v1/);
    const missing = await meshctlAsync(["proxy-status", "ratings-v1.demo", "--admin", mesh.adminUrl]);
    assert.equal(missing.status, 1);
    assert.equal(missing.stderr, "Error: meshctl proxy-status: no sidecar among --admin is ratings-v1.demo\n");
  });

  test("--sds: nothing to compare, said so", async () => {
    const run = await meshctlAsync(["proxy-status", "--admin", mesh.adminUrl, "--sds"]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /\nSDS: the sidecars hold no certificates yet and there are no node agents: nothing to compare\n$/);
  });

  test("without --admin it needs an orchestrator (exit 69); a bad --admin is a usage error (exit 2)", async () => {
    const run = await meshctl(["proxy-status"]);
    assert.equal(run.status, 69);
    assert.equal(
      run.stderr,
      "meshctl proxy-status: this command needs an orchestrator API, which is not available here; use `--debugAddress HOST:PORT` (disco-discovery's debug port) or `--admin URL` for each sidecar (repeatable) offline instead\n",
    );
    const bad = await meshctl(["proxy-status", "--admin", "ftp://x"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /expected an admin URL/);
  });
});
