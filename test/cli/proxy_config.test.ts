import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { formatSecrets } from "../../host/cli/meshctl/proxy_config.ts";
import type { ConfigDump } from "../../host/cli/meshctl/sidecar_admin.ts";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { sidecarConfig } from "../e2e/sidecar_support.ts";
import { meshctl, tempFile } from "./cli_golden_support.ts";
import { SIDECAR_POLICIES, meshctlAsync } from "./sidecar_cli_support.ts";
import { tempDir } from "../support/processes.ts";

// `meshctl proxy-config listener|route|endpoints|secret|log` against a
// running sidecar (HTTP and TCP listeners, one outbound cluster) and a saved dump.

const REVIEWS = "reviews.demo.svc.cluster.local";

describe("proxy-config against a running sidecar", async () => {
  let mesh: LocalMesh;
  let admin: string;
  let dumpFile: string;
  before(async () => {
    mesh = await startLocalMesh({
      sidecarConfig: `${sidecarConfig("FAIL_OPEN")}---\n${SIDECAR_POLICIES}`,
      tcp: true,
      agentArgs: ["--cluster", `${REVIEWS}=127.0.0.1:9`],
    });
    admin = mesh.adminUrl;
    dumpFile = join(tempFile("", "x.txt"), "..", "config_dump.json");
    writeFileSync(dumpFile, await (await fetch(`${admin}/config_dump`)).text());
  });
  after(async () => {
    await mesh?.stop();
  });

  test("listener: every listener with address, port, type, filters in order and destination", async () => {
    const run = await meshctlAsync(["proxy-config", "listener", "--admin", admin]);
    assert.equal(run.status, 0, run.stderr);
    const l = mesh.sidecar.listening;
    const lines = run.stdout.trimEnd().split("\n");
    assert.match(lines[0], /^NAME\s+ADDRESS\s+PORT\s+TYPE\s+DIRECTION\s+FILTERS\s+DESTINATION$/);
    assert.match(
      lines[1],
      new RegExp(
        `^inbound\\s+127\\.0\\.0\\.1\\s+${l.inbound}\\s+HTTP\\s+INBOUND\\s+mesh\\.hub_client,mesh\\.router\\s+petstore\\.demo\\.svc\\.cluster\\.local -> 127\\.0\\.0\\.1:${mesh.app.port}$`,
      ),
    );
    assert.match(lines[2], new RegExp(`^outbound\\s+127\\.0\\.0\\.1\\s+${l.outbound}\\s+HTTP\\s+OUTBOUND\\s+mesh\\.hub_client,mesh\\.router\\s+per authority`));
    assert.match(
      lines[3],
      new RegExp(`^tcp\\s+127\\.0\\.0\\.1\\s+${l.tcp}\\s+TCP\\s+INBOUND\\s+mesh\\.hub_client,mesh\\.tcp_proxy\\s+127\\.0\\.0\\.1:${mesh.tcpApp!.port}$`),
    );
    assert.match(lines[4], new RegExp(`^admin\\s+127\\.0\\.0\\.1\\s+${l.admin}\\s+HTTP\\s+ADMIN\\s+mesh\\.admin\\s+-$`));
    assert.equal(lines.length, 5);
  });

  test("listener filters: --port, --type, --address; -o json", async () => {
    const byPort = JSON.parse((await meshctlAsync(["pc", "l", "--admin", admin, "--port", String(mesh.sidecar.listening.inbound), "-o", "json"])).stdout);
    assert.deepEqual(byPort, [
      {
        name: "inbound",
        address: "127.0.0.1",
        port: mesh.sidecar.listening.inbound,
        protocol: "HTTP",
        direction: "INBOUND",
        filters: ["mesh.hub_client", "mesh.router"],
        upstream: `127.0.0.1:${mesh.app.port}`,
        service: "petstore.demo.svc.cluster.local",
        route: "inbound",
      },
    ]);
    const tcp = JSON.parse((await meshctlAsync(["proxy-config", "listeners", "--admin", admin, "--type", "tcp", "-o", "json"])).stdout);
    assert.deepEqual(
      tcp.map((x: { name: string }) => x.name),
      ["tcp"],
    );
    const elsewhere = await meshctlAsync(["proxy-config", "listener", "--admin", admin, "--address", "10.0.0.1"]);
    assert.equal(elsewhere.stdout, "NAME   ADDRESS   PORT   TYPE   DIRECTION   FILTERS   DESTINATION\n");
    const badPort = await meshctlAsync(["proxy-config", "listener", "--admin", admin, "--port", "http"]);
    assert.equal(badPort.status, 2);
  });

  test("route: virtual hosts per listener, the outbound one per cluster plus passthrough; --name", async () => {
    const run = await meshctlAsync(["proxy-config", "route", "--admin", admin]);
    assert.equal(run.status, 0, run.stderr);
    const rows = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => line.split(/\s{3,}/));
    assert.deepEqual(rows, [
      ["NAME", "LISTENER", "VIRTUAL HOST", "DOMAINS", "UPSTREAM"],
      ["inbound", "inbound", "petstore.demo.svc.cluster.local", "*", `127.0.0.1:${mesh.app.port}`],
      ["outbound", "outbound", REVIEWS, `${REVIEWS},${REVIEWS}:*`, "127.0.0.1:9"],
      ["outbound", "outbound", "passthrough", "*", "the Host header's address (port 80 when none)"],
    ]);
    const named = JSON.parse((await meshctlAsync(["pc", "r", "--admin", admin, "--name", "outbound", "-o", "json"])).stdout);
    assert.deepEqual(
      named.map((r: { name: string; virtualHosts: Array<{ name: string }> }) => [r.name, r.virtualHosts.map((v) => v.name)]),
      [["outbound", [REVIEWS, "passthrough"]]],
    );
  });

  test("endpoints: each cluster's addresses, health UNKNOWN; --name", async () => {
    const run = await meshctlAsync(["proxy-config", "endpoints", "--admin", admin]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^ENDPOINT\s+STATUS\s+CLUSTER\n/);
    assert.match(run.stdout, new RegExp(`\\n127\\.0\\.0\\.1:${mesh.app.port}\\s+UNKNOWN\\s+inbound\\|app\\n`));
    assert.match(run.stdout, new RegExp(`\\n127\\.0\\.0\\.1:${mesh.hub.listening.grpcPort}\\s+UNKNOWN\\s+hub_server\\n`));
    const one = await meshctlAsync(["proxy-config", "endpoints", "--admin", admin, "--name", REVIEWS]);
    assert.equal(one.stdout, `ENDPOINT      STATUS    CLUSTER\n127.0.0.1:9   UNKNOWN   ${REVIEWS}\n`);
  });

  test("endpoints --file takes the proxy admin's /clusters?format=json (spec 3): the same endpoints, with their health", async () => {
    const res = await fetch(`${admin}/clusters?format=json`);
    assert.equal(res.status, 200);
    const file = tempFile(await res.text(), "clusters.json");
    const run = await meshctl(["proxy-config", "endpoints", "-f", file]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^ENDPOINT\s+STATUS\s+CLUSTER\n/);
    const live = JSON.parse((await meshctlAsync(["proxy-config", "endpoints", "--admin", admin, "-o", "json"])).stdout);
    const saved = JSON.parse((await meshctl(["proxy-config", "endpoints", "-f", file, "-o", "json"])).stdout);
    // The admin names inbound clusters as Envoy does (`inbound|<port>||<name>`); the endpoints are the same.
    const addresses = (list: Array<{ endpoints: Array<{ address: string; port: number }> }>) =>
      list.flatMap((c) => c.endpoints.map((e) => `${e.address}:${e.port}`)).sort();
    assert.deepEqual(addresses(saved), addresses(live));
    assert.ok(saved.every((c: { endpoints: Array<{ health: string }> }) => c.endpoints.every((e) => e.health === "HEALTHY")));
    const one = await meshctl(["proxy-config", "endpoints", "-f", file, "--name", REVIEWS]);
    assert.equal(one.stdout, `ENDPOINT      STATUS    CLUSTER\n127.0.0.1:9   HEALTHY   ${REVIEWS}\n`);
    const broken = await meshctl(["proxy-config", "endpoints", "-f", tempFile('{"cluster_statuses":[{"host_statuses":[]}]}', "c.json")]);
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /c\.json: cluster_statuses\[0\]\.name: expected a cluster name, got undefined/);
  });

  test("secret: no certificates yet, said so", async () => {
    const run = await meshctlAsync(["proxy-config", "secret", "--admin", admin]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^RESOURCE NAME\s+TYPE\s+STATUS\s+VALID CERT\s+SERIAL NUMBER\s+NOT AFTER\s+NOT BEFORE\s+IDENTITY\n\nNo certificates: none: this sidecar holds no certificates yet/,
    );
    assert.deepEqual(JSON.parse((await meshctlAsync(["pc", "s", "--admin", admin, "-o", "json"])).stdout).certificates, []);
  });

  test("--file reads a saved /config_dump; the pod argument must name its sidecar", async () => {
    const run = await meshctl(["proxy-config", "listener", "petstore-v1.demo", "--file", dumpFile, "--type", "HTTP", "-o", "json"]);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(
      JSON.parse(run.stdout).map((l: { name: string }) => l.name),
      ["inbound", "outbound", "admin"],
    );
    assert.equal((await meshctl(["proxy-config", "route", "petstore-v1", "-f", dumpFile])).status, 0);
    const wrong = await meshctl(["proxy-config", "route", "reviews-v1.demo", "-f", dumpFile]);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /is the sidecar petstore-v1\.demo, not reviews-v1\.demo/);
    const notDump = await meshctl(["proxy-config", "listener", "-f", tempFile("{}", "x.json")]);
    assert.equal(notDump.status, 1);
    assert.match(notDump.stderr, /expected a sidecar \/config_dump JSON document, without identity\.id/);
    const none = await meshctl(["proxy-config", "listener"]);
    assert.equal(none.status, 69);
    assert.match(
      none.stderr,
      /meshctl proxy-config listener: this command needs an orchestrator API.*`--admin URL` \(a running sidecar\) or `--file config_dump\.json`/,
    );
  });

  test("log: shows levels; --level maps upstream loggers to the sidecar's scopes; --reset sets warning", async () => {
    const shown = await meshctlAsync(["proxy-config", "log", "--admin", admin]);
    assert.equal(shown.status, 0, shown.stderr);
    // The spec's disco-agent scopes, then the sidecar's own.
    assert.match(shown.stdout, /^active loggers:\n(  [a-z]+: \w+\n)+$/);
    for (const scope of ["default", "filter", "hub", "config", "authn", "anchorclient"]) assert.match(shown.stdout, new RegExp(`\n  ${scope}: \\w+\n`));
    const filter = await meshctlAsync([
      "proxy-config",
      "log",
      "petstore-v1.demo",
      "--admin",
      admin,
      "--level",
      "rbac:debug,grpc:error,config:critical",
      "-o",
      "json",
    ]);
    assert.equal(filter.status, 0, filter.stderr);
    const levels = JSON.parse(filter.stdout);
    assert.equal(levels.filter, "debug");
    assert.equal(levels.hub, "error");
    assert.equal(levels.config, "critical");
    const reset = await meshctlAsync(["pc", "o", "--admin", admin, "-r"]);
    assert.match(reset.stdout, /^active loggers:\n(  [a-z]+: warning\n)+$/);
    const resetThen = await meshctlAsync(["pc", "log", "--admin", admin, "--reset", "--level", "trace"]);
    assert.match(resetThen.stdout, /^active loggers:\n(  [a-z]+: debug\n)+$/);
    const off = await meshctlAsync(["pc", "log", "--admin", admin, "--level", "off"]);
    assert.match(off.stdout, /default: off\n/);
    // The sidecar really changed: its own /logging says so.
    assert.match(await (await fetch(`${admin}/logging`)).text(), /default: none/);
    await meshctlAsync(["pc", "log", "--admin", admin, "--level", "info"]);
  });

  test("log: unknown logger or level is a usage error (exit 2); a file cannot be changed (exit 1)", async () => {
    const logger = await meshctlAsync(["proxy-config", "log", "--admin", admin, "--level", "bogus:debug"]);
    assert.equal(logger.status, 2);
    assert.match(logger.stderr, /unknown logger "bogus"/);
    const level = await meshctlAsync(["proxy-config", "log", "--admin", admin, "--level", "filter:loud"]);
    assert.equal(level.status, 2);
    assert.match(level.stderr, /unknown level "loud" \(levels: trace, debug, info, warning, error, critical, off\)/);
    const file = await meshctlAsync(["proxy-config", "log", "--level", "debug"]);
    assert.equal(file.status, 69);
    assert.match(file.stderr, /needs an orchestrator API/);
  });
});

describe("proxy-config secret against a secure sidecar (--caAddress)", async () => {
  let ca: Awaited<ReturnType<typeof startMeshCa>> | undefined;
  let workload: SecureWorkload | undefined;
  before(async () => {
    ca = await startMeshCa();
    workload = await startSecureWorkload({ name: "httpbin", namespace: "foo", configDir: tempDir("pc-secret-"), ca });
  });
  after(async () => {
    await workload?.stop();
    await ca?.stop();
  });

  test("secret: a table of the workload certificate and the root, values as in the dump", async () => {
    const dump = JSON.parse((await meshctlAsync(["pc", "s", "--admin", workload!.adminUrl, "-o", "json"])).stdout);
    const [leaf, root] = dump.certificates as Array<{
      name: string;
      identity?: string;
      serialNumber: string;
      notBefore: string;
      notAfter: string;
      subject: string;
    }>;
    assert.deepEqual(
      dump.certificates.map((c: { name: string }) => c.name),
      ["default", "ROOTCA"],
      "-o json is the dump's secrets, as before",
    );
    assert.equal(leaf.identity, "spiffe://cluster.local/ns/foo/sa/httpbin");

    const run = await meshctlAsync(["proxy-config", "secret", "httpbin.foo", "--admin", workload!.adminUrl]);
    assert.equal(run.status, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /[{}]/, "no raw JSON");
    const rows = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => line.split(/\s{3,}/));
    const second = (iso: string) => iso.replace(/\.\d{3}Z$/, "Z");
    assert.deepEqual(rows, [
      ["RESOURCE NAME", "TYPE", "STATUS", "VALID CERT", "SERIAL NUMBER", "NOT AFTER", "NOT BEFORE", "IDENTITY"],
      [
        "default",
        "Cert Chain",
        "ACTIVE",
        "true",
        BigInt(`0x${leaf.serialNumber}`).toString(),
        second(leaf.notAfter),
        second(leaf.notBefore),
        "spiffe://cluster.local/ns/foo/sa/httpbin",
      ],
      [
        "ROOTCA",
        "CA",
        "ACTIVE",
        "true",
        BigInt(`0x${root.serialNumber}`).toString(),
        second(root.notAfter),
        second(root.notBefore),
        root.subject.split("\n").join(","),
      ],
    ]);
    assert.match(rows[1][5], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Date.parse(rows[2][5]) > Date.parse(rows[1][5]), "the root outlives the workload certificate");
  });
});

describe("formatSecrets (a saved dump, a fixed time)", async () => {
  const dump = (certificates: unknown[], note?: string) => ({ secrets: { certificates, ...(note ? { note } : {}) } }) as unknown as ConfigDump;
  const certs = [
    {
      name: "default",
      identity: "spiffe://td/ns/a/sa/b",
      subject: "",
      subjectAltName: "URI:spiffe://td/ns/a/sa/b",
      serialNumber: "0A",
      notBefore: "2024-01-01T00:00:00.000Z",
      notAfter: "2024-01-02T00:00:00.000Z",
    },
    { name: "ROOTCA", subject: "O=td", subjectAltName: "", serialNumber: "FF", notBefore: "2023-01-01T00:00:00.000Z", notAfter: "2033-01-01T00:00:00.000Z" },
    { name: "ROOTCA.1", subject: "O=td\nCN=old root", serialNumber: "zz", notBefore: "2020-01-01T00:00:00.000Z", notAfter: "2023-06-01T00:00:00.000Z" },
    { name: "ROOTCA.2", subjectAltName: "URI:spiffe://td, DNS:ca.td" },
  ];

  test("VALID CERT against now; decimal serials; times to the second; identity, URI SAN or subject; '-' for what is missing", async () => {
    assert.equal(
      formatSecrets(dump(certs), new Date("2024-01-01T12:00:00Z")),
      [
        "RESOURCE NAME   TYPE         STATUS   VALID CERT   SERIAL NUMBER   NOT AFTER              NOT BEFORE             IDENTITY",
        "default         Cert Chain   ACTIVE   true         10              2024-01-02T00:00:00Z   2024-01-01T00:00:00Z   spiffe://td/ns/a/sa/b",
        "ROOTCA          CA           ACTIVE   true         255             2033-01-01T00:00:00Z   2023-01-01T00:00:00Z   O=td",
        "ROOTCA.1        CA           ACTIVE   false        zz              2023-06-01T00:00:00Z   2020-01-01T00:00:00Z   O=td,CN=old root",
        "ROOTCA.2        CA           ACTIVE   false        -               -                      -                      spiffe://td",
        "",
      ].join("\n"),
    );
    assert.match(formatSecrets(dump(certs), new Date("2024-01-03T00:00:00Z")).split("\n")[1], /^default\s+Cert Chain\s+ACTIVE\s+false\s/, "expired");
  });

  test("no certificates: the header and the dump's note", async () => {
    assert.equal(
      formatSecrets(dump([], "none: no TLS")),
      "RESOURCE NAME   TYPE   STATUS   VALID CERT   SERIAL NUMBER   NOT AFTER   NOT BEFORE   IDENTITY\n\nNo certificates: none: no TLS\n",
    );
    assert.match(formatSecrets({} as ConfigDump), /\nNo certificates: none reported\n$/);
  });
});
