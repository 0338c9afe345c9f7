// Spec 2's log scopes carry the lines of their concern, on the four daemons
// as real processes: each runs once with every scope at debug
// (`--log_output_level all:debug`), JSON lines and `--log_caller all`; the
// test drives an action of each scope's concern (a request through the
// secure sidecar, the hub's Check and Report, CSRs, a refused file, a bad
// webhook call, a token-exchange listener) and finds at least one line of
// every scope host/daemon/spec_surface/log_scopes.ts says carries lines. The
// scope lists themselves are spec 2's (read from the spec file), and every
// caller names a TypeScript source under host/.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { DEMO_DIR, type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { LOG_SCOPE_USE } from "../../host/daemon/spec_surface/log_scopes.ts";
import type { SpecDaemon } from "../../host/daemon/spec_surface/metrics.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { freePort, get } from "../e2e/sidecar_support.ts";
import { type Daemon, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { specLogScopes } from "../support/spec2.ts";

const DEBUG_EVERYTHING = ["--log_output_level", "all:debug", "--log_as_json", "--log_caller", "all"];
const ROOT = join(import.meta.dirname, "..", "..");

const ALLOW_GETS = `---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: gets, namespace: demo}
spec:
  action: ALLOW
  rules: [{to: [{operation: {methods: [GET]}}]}]
`;

const DISCOVERY_MESH = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: shop}
spec:
  hosts: [db.example.com]
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  resolution: STATIC
  endpoints: [{address: 127.0.0.1}]
${ALLOW_GETS}---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: mesh-system}
spec: {mtls: {mode: STRICT}}
`;

interface LogLine {
  scope: string;
  caller?: string;
  msg: string;
}

/** The JSON log lines of a daemon's output. */
function logLines(output: string): LogLine[] {
  return output
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine)
    .filter((l) => typeof l.scope === "string");
}

const scopesSeen = (output: string) => new Set(logLines(output).map((l) => l.scope));
const expectedScopes = (daemon: SpecDaemon) =>
  Object.entries(LOG_SCOPE_USE[daemon])
    .filter(([, use]) => "logs" in use)
    .map(([scope]) => scope);

let mesh: LocalMesh;
let discovery: Daemon<{ https: string }>;
const outputs = new Map<SpecDaemon, string>();

before(async () => {
  const stsPort = await freePort();
  mesh = await startLocalMesh({
    secure: true,
    sidecarConfig: readFileSync(join(DEMO_DIR, "petstore.yaml"), "utf8") + ALLOW_GETS,
    agentArgs: [...DEBUG_EVERYTHING, "--stsPort", String(stsPort)],
    hubArgs: DEBUG_EVERYTHING,
    caArgs: DEBUG_EVERYTHING,
  });
  const certs = tempDir("log-scopes-disco-certs-");
  await writeWorkloadCertFiles(mesh.ca!, "mesh-system", "disco-discovery", certs);
  const configDir = tempDir("log-scopes-disco-");
  writeFileSync(join(configDir, "mesh.yaml"), DISCOVERY_MESH);
  discovery = await startDaemon(
    DISCOVERY_BIN,
    [
      "discovery",
      "--configDir",
      configDir,
      "--grpcAddr",
      "127.0.0.1:0",
      "--httpAddr",
      "",
      ...SIDE_LISTENERS_OFF,
      "--httpsAddr",
      "127.0.0.1:0",
      // The secure port states in scope serverca whether certificate requests are relayed.
      "--secureGrpcAddr",
      "127.0.0.1:0",
      ...DEBUG_EVERYTHING,
    ],
    "disco-discovery listening: ",
    undefined,
    { ...process.env, DISCO_CERT_DIR: certs },
  );

  // The actions: a request through the sidecar (authentication, authorization, the hub's Check and Report) …
  for (const path of ["/pets/1", "/pets/2"]) await get(`${mesh.inboundUrl}${path}`);
  // … a refused configuration file for the sidecar and for disco-discovery …
  writeFileSync(
    join(mesh.sidecarConfigDir, "broken.yaml"),
    "apiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: broken, namespace: demo}\nspec: {action: SOMETIMES}\n",
  );
  writeFileSync(
    join(configDir, "broken.yaml"),
    "apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: broken, namespace: shop}\nspec: {hosts: []}\n",
  );
  // … and a request the validation webhook cannot take.
  await new Promise<void>((resolve, reject) => {
    const [host, port] = [discovery.listening.https.replace(/:\d+$/, ""), Number(discovery.listening.https.split(":").pop())];
    const req = httpsRequest(
      {
        host,
        port,
        path: "/validate",
        method: "POST",
        ca: readFileSync(join(certs, "root-cert.pem")),
        servername: "localhost",
        rejectUnauthorized: false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        res.resume();
        res.on("end", resolve);
      },
    );
    req.on("error", reject);
    req.end("not a review");
  });

  const everyScope = async (daemon: SpecDaemon, output: () => string) => {
    await waitFor(
      `${daemon}: a line of every scope that carries lines`,
      () => expectedScopes(daemon).every((s) => s === "default" || scopesSeen(output()).has(s)),
      90_000,
      200,
    );
  };
  await Promise.all([
    everyScope("disco-agent", () => mesh.sidecar.output()),
    everyScope("hubs", () => mesh.hub.output()),
    everyScope("mesh_ca", () => mesh.ca!.output()),
    everyScope("disco-discovery", () => discovery.output()),
  ]).catch(() => undefined); // the assertions below name what is missing
  // Stopping logs in `default` on every daemon.
  await discovery.stop();
  outputs.set("disco-discovery", discovery.output());
  await mesh.stop();
  outputs.set("disco-agent", mesh.sidecar.output());
  outputs.set("hubs", mesh.hub.output());
  outputs.set("mesh_ca", mesh.ca!.output());
});

after(async () => {
  // Stopped in `before` once its lines were read; here only when it failed before that.
  if (outputs.size > 0) return;
  await discovery?.stop();
  await mesh?.stop();
});

describe("log scopes of spec 2 on every daemon", { timeout: 600_000 }, () => {
  it("each daemon's table names exactly spec 2's scopes for it (and the docs table lists each)", () => {
    const spec = specLogScopes();
    const doc = readFileSync(join(ROOT, "docs", "daemon-reference.md"), "utf8");
    for (const daemon of ["disco-agent", "mesh_ca", "hubs", "disco-discovery"] as const) {
      const listed = spec
        .get(daemon)!
        .filter((s) => s !== "all")
        .sort();
      assert.deepEqual(Object.keys(LOG_SCOPE_USE[daemon]).sort(), listed, daemon);
      for (const [scope, use] of Object.entries(LOG_SCOPE_USE[daemon])) {
        assert.ok(
          doc.includes(`| ${daemon} | \`${scope}\` | ${"logs" in use ? use.logs : `— ${use.silent}`} |`),
          `docs/daemon-reference.md row ${daemon} ${scope}`,
        );
      }
    }
  });

  for (const daemon of ["disco-agent", "mesh_ca", "hubs", "disco-discovery"] as const) {
    it(`${daemon}: a line of every scope of its concern, each caller a host/ TypeScript source`, () => {
      const output = outputs.get(daemon)!;
      const lines = logLines(output);
      const seen = new Set(lines.map((l) => l.scope));
      const missing = expectedScopes(daemon).filter((s) => !seen.has(s));
      assert.deepEqual(missing, [], `scopes without a line; seen: ${[...seen].join(", ")}`);
      const badCallers = lines.filter((l) => !/^host\/[\w/.-]+\.ts:\d+$/.test(l.caller ?? "")).map((l) => `${l.scope}: ${l.caller} ${l.msg}`);
      assert.deepEqual(badCallers, []);
      // Silent scopes stay silent: a line there would contradict the table.
      const silent = Object.entries(LOG_SCOPE_USE[daemon])
        .filter(([, use]) => "silent" in use)
        .map(([scope]) => scope);
      assert.deepEqual(
        silent.filter((s) => seen.has(s)),
        [],
      );
    });
  }

  it("--log_stacktrace_level attaches the stack, source-mapped to host/ files", async () => {
    const dir = tempDir("log-scopes-stack-");
    const d = await startDaemon(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        dir,
        "--grpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "",
        ...SIDE_LISTENERS_OFF,
        "--log_as_json",
        "--log_stacktrace_level",
        "ads:info",
      ],
      "disco-discovery listening: ",
    );
    await d.stop();
    const line = logLines(d.output()).find((l) => l.scope === "ads") as (LogLine & { stack?: string }) | undefined;
    assert.ok(line?.stack, "an ads line with a stack");
    assert.match(line.stack, /at .*\/host\/discovery\/server\.ts:\d+:\d+/);
    assert.doesNotMatch(line.stack.split("\n")[0], /telemetry\/logger/, "the logger's own frames are left out");
  });
});
