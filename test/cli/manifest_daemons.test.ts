// The Deployments `meshctl manifest generate` renders start the real
// daemons: each container's args (and env), with the mounted paths moved to
// temporary folders and the ports to free ones, bring disco-discovery, hubs
// and mesh_ca to their listening line. A flag the daemon does not know, or a
// value it refuses, would exit 2 instead.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { startDaemon, tempDir } from "../support/processes.ts";
import { meshctlInProcess } from "./in_process.ts";

type Obj = Record<string, any>;
const OUT = join(import.meta.dirname, "..", "..", "build", "out");

/** Where the rendered volumes are mounted → a temporary folder, and listening ports → 0. */
function localArgs(args: string[], dir: string): string[] {
  const paths: Record<string, string> = {
    "/etc/mesh/resources": join(dir, "resources"),
    "/etc/mesh/config/mesh": join(dir, "mesh"),
    "fs:///etc/mesh/hub-config": `fs://${join(dir, "hub-config")}`,
    "/var/run/mesh-ca": join(dir, "ca"),
  };
  const ports = new Set(["--grpc-port", "--monitoring-port", "--port", "--monitoringPort"]);
  return args.map((a, i) => (ports.has(args[i - 1]) ? "0" : (paths[a] ?? a)));
}

describe("manifest generate: the rendered daemons start", async () => {
  const r = await meshctlInProcess(["manifest", "generate", "--set", "values.anchor.workloadCertTtl=24h"], { env: { PATH: process.env.PATH } });
  assert.equal(r.status, 0, r.stderr);
  const objects: Obj[] = parseAllDocuments(r.stdout).map((d) => d.toJS());
  const container = (name: string) => objects.find((o) => o.kind === "Deployment" && o.metadata.name === name)!.spec.template.spec.containers[0];
  const envOf = (c: Obj): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    POD_NAME: "test-0",
    POD_NAMESPACE: "mesh-system",
    ...Object.fromEntries((c.env ?? []).filter((e: Obj) => "value" in e).map((e: Obj) => [e.name, e.value])),
  });

  const rows: Array<[string, string, string[], string]> = [
    ["mesh-ca", "mesh_ca.mjs", ["--ctrlz_port", "0"], "mesh_ca listening "],
    ["mesh-hub", "hubs.mjs", ["--ctrlz_port", "0"], "hubs listening "],
    // Its TLS listeners need the mesh_ca certificate of the Secret mesh.mesh-disco-service-account: off here.
    [
      "mesh-disco",
      "disco-discovery.mjs",
      ["--grpcAddr", "127.0.0.1:0", "--secureGrpcAddr", "", "--httpsAddr", "", "--monitoringAddr", "127.0.0.1:0", "--httpAddr", "", "--ctrlz_port", "0"],
      "disco-discovery listening: ",
    ],
  ];
  for (const [name, program, extra, listening] of rows) {
    it(`${name}: ${program} with the rendered args reaches its listening line`, async () => {
      const dir = tempDir("mesh-manifest-daemon-");
      for (const d of ["resources", "hub-config", "ca"]) mkdirSync(join(dir, d));
      writeFileSync(join(dir, "mesh"), objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "mesh")!.data.mesh);
      const c = container(name);
      const daemon = await startDaemon(join(OUT, program), [...localArgs(c.args, dir), ...extra], listening, undefined, envOf(c));
      assert.ok(daemon.listening);
      assert.equal(await daemon.stop(), 0, daemon.output());
    });
  }
});
