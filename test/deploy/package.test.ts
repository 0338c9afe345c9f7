// The npm package as users get it: `npm pack`, installed into an empty
// folder (its dependencies from the registry), runs `meshctl validate` and
// serves requests with `hubs server` and `disco-agent proxy` from the package.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { startEchoApp } from "../../host/demo/echo_app.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const DEMO = join(ROOT, "host", "demo");
const READY_MS = 60_000;

/**
 * The machine's npm: inside `npm test` PATH starts with node_modules/.bin,
 * where a dependency of @as-pect/cli installs npm 6 (no --pack-destination).
 */
const NPM_ENV = {
  ...process.env,
  PATH: (process.env.PATH ?? "")
    .split(delimiter)
    .filter((p) => !p.includes(`node_modules${sep}.bin`))
    .join(delimiter),
};

interface PackedFile {
  path: string;
}

describe("npm pack, installed into an empty folder", () => {
  const work = mkdtempSync(join(tmpdir(), "mesh-pack-"));
  const app = join(work, "app");
  let packed: PackedFile[] = [];
  let pkg = "";

  before(() => {
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT, env: NPM_ENV, encoding: "utf8", maxBuffer: 64 << 20 });
    const [info] = JSON.parse(out) as Array<{ filename: string; files: PackedFile[] }>;
    packed = info.files;
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "pack-check", version: "1.0.0", private: true }));
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", join(work, info.filename)], {
      cwd: app,
      env: NPM_ENV,
      stdio: ["ignore", "ignore", "inherit"],
    });
    pkg = join(app, "node_modules", "mesh-policy-filter");
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it("ships the module, the built programs, the protos and the deploy artifacts, and no tests or sources (declarations only)", () => {
    const paths = new Set(packed.map((f) => f.path));
    for (const p of [
      "build/filter.wasm",
      "build/out/meshctl.mjs",
      "build/out/disco-agent.mjs",
      "build/out/hubs.mjs",
      "build/out/mesh_ca.mjs",
      "proto/mesh/hub/v1/hub.proto",
      "build/deploy/envoy-bootstrap.yaml",
      "build/deploy/oci/index.json",
      "package.json",
      "README.md",
    ]) {
      assert.ok(paths.has(p), `${p} is not in the package`);
    }
    const unwanted = [...paths].filter(
      (p) =>
        /^(test|assembly|host\/(?!demo\/[^/]+\.(ya?ml|jsonl)$)|\.ci)\b/.test(p) ||
        (p.endsWith(".ts") && !/^build\/types\/[^/]+\.d\.ts$/.test(p)) ||
        p.endsWith(".map"),
    );
    assert.deepEqual(unwanted, []);
    const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
    for (const buildOnly of ["assemblyscript", "esbuild", "tsx", "@as-pect/cli"])
      assert.equal(manifest.dependencies[buildOnly], undefined, `${buildOnly} is a runtime dependency`);
  });

  it("meshctl validate from the package checks resources with the packaged module", () => {
    const bin = join(app, "node_modules", ".bin", "meshctl");
    const ok = spawnSync(bin, ["validate", "-f", join(DEMO, "petstore.yaml")], { cwd: app, encoding: "utf8" });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /petstore\.yaml" is valid/);
    // A regex the module's engine refuses proves the packaged filter.wasm is what checks it.
    const bad = join(work, "bad.yaml");
    writeFileSync(bad, readFileSync(join(DEMO, "petstore.yaml"), "utf8").replace('regex: "/healthz(\\\\?.*)?"', 'regex: "/(a)\\\\1"'));
    const refused = spawnSync(bin, ["validate", "-f", bad], { cwd: app, encoding: "utf8" });
    assert.equal(refused.status, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /backreference/i);
  });

  it("hubs server and disco-agent proxy from the package start and serve a request through the filter", async () => {
    const config = join(work, "sidecar");
    const hubConfig = join(work, "hub");
    mkdirSync(config);
    mkdirSync(hubConfig);
    writeFileSync(join(config, "petstore.yaml"), readFileSync(join(DEMO, "petstore.yaml")));
    writeFileSync(join(hubConfig, "rules.yaml"), readFileSync(join(DEMO, "hub-rules.yaml")));
    const echo = await startEchoApp();
    let hub: Daemon<{ grpcPort: number }> | undefined;
    let sidecar: Daemon<{ inbound: number; admin: number }> | undefined;
    try {
      hub = await startDaemon(
        join(app, "node_modules", ".bin", "hubs"),
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
          "--configStoreURL",
          `fs://${hubConfig}`,
          "--configDefaultNamespace",
          "mesh-system",
        ],
        "hubs listening ",
        READY_MS,
      );
      sidecar = await startDaemon(
        join(app, "node_modules", ".bin", "disco-agent"),
        [
          "proxy",
          "--inboundPort",
          "0",
          "--outboundPort",
          "0",
          "--proxyAdminPort",
          "0",
          "--appPort",
          String(echo.port),
          "--configDir",
          config,
          "--cluster",
          `hub_server=127.0.0.1:${hub.listening.grpcPort}`,
          "--inboundService",
          "petstore.demo.svc.cluster.local",
        ],
        "disco-agent listening ",
        READY_MS,
        { ...process.env, POD_NAME: "petstore-v1", POD_NAMESPACE: "demo" },
      );
      const allowed = await fetch(`http://127.0.0.1:${sidecar.listening.inbound}/pets/42?key=alice`);
      assert.equal(allowed.status, 200, await allowed.text());
      assert.equal(echo.seen.length, 1);
      const denied = await fetch(`http://127.0.0.1:${sidecar.listening.inbound}/admin`);
      assert.equal(denied.status, 403);
      assert.equal(await denied.text(), "PERMISSION_DENIED:admins only");
      const stats = await fetch(`http://127.0.0.1:${sidecar.listening.admin}/stats`);
      assert.match(await stats.text(), /hub_client/);
    } finally {
      await sidecar?.stop();
      await hub?.stop();
      echo.server.closeAllConnections();
      await new Promise<void>((resolve) => echo.server.close(() => resolve()));
    }
  });
});
