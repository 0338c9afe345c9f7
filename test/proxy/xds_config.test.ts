import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DiscoveryServer } from "../../host/discovery/server.ts";
import type { LoadedConfig } from "../../host/config/config_dir.ts";
import { XdsConfigSource } from "../../host/proxy/xds_config.ts";
import { denyPolicy, silent, startTestDiscovery, testChecks, until } from "../discovery/support/in_process.ts";

// The sidecar's configuration over ADS: the control plane's folder, decoded
// by the sidecar as it decodes its own --configDir; changes arrive without a
// restart; a version the sidecar cannot apply is NACKed and the last good
// configuration stays.

describe("sidecar configuration over ADS", { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "xds-config-"));
  const checks = testChecks();
  let discovery: DiscoveryServer;
  const nacks: string[] = [];

  before(async () => {
    writeFileSync(join(dir, "policy.yaml"), denyPolicy("/admin"));
    discovery = await startTestDiscovery(dir, { observer: { nacked: (_n, _t, _v, message) => nacks.push(message) } });
  });
  after(async () => {
    await discovery?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deniedPaths = (c: LoadedConfig) => c.mesh.byKind.AuthorizationPolicy.flatMap((p) => p.spec.rules.flatMap((r) => r.to.flatMap((t) => t.paths ?? [])));

  it("receives the folder's documents, then each change, without a restart", async () => {
    const applied: LoadedConfig[] = [];
    const source = new XdsConfigSource(
      discovery.listeners.grpc!,
      { id: "sidecar~127.0.0.1~a.foo~foo.svc.cluster.local", cluster: "a.foo" },
      checks,
      DEFAULT_DOMAIN,
      (c) => (applied.push(c), true),
      () => {},
      silent,
    );
    try {
      assert.equal(await source.start(), true);
      assert.deepEqual(deniedPaths(applied[0]), ["/admin"]);
      writeFileSync(join(dir, "policy.yaml"), denyPolicy("/secret"));
      const next = await until("the change", () => applied.find((c) => deniedPaths(c).includes("/secret")));
      assert.deepEqual(deniedPaths(next), ["/secret"]);
    } finally {
      source.stop();
    }
  });

  it("a bad file is refused by the control plane: sidecars keep the last good configuration", async () => {
    const applied: LoadedConfig[] = [];
    const source = new XdsConfigSource(
      discovery.listeners.grpc!,
      { id: "sidecar~127.0.0.1~b.foo~foo.svc.cluster.local", cluster: "b.foo" },
      checks,
      DEFAULT_DOMAIN,
      (c) => (applied.push(c), true),
      () => {},
      silent,
    );
    try {
      await source.start();
      const before = discovery.snapshot().version;
      writeFileSync(join(dir, "broken.yaml"), denyPolicy("/x").replace("action: DENY", "action: MAYBE"));
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(discovery.snapshot().version, before, "the control plane kept its version");
      assert.equal(applied.length, 1);
    } finally {
      rmSync(join(dir, "broken.yaml"), { force: true });
      source.stop();
    }
  });

  it("a version the sidecar cannot apply is NACKed with the reason", async () => {
    const refusing = (c: LoadedConfig) => !deniedPaths(c).includes("/refuse-me");
    let rejected = "";
    const source = new XdsConfigSource(
      discovery.listeners.grpc!,
      { id: "sidecar~127.0.0.1~c.foo~foo.svc.cluster.local", cluster: "c.foo" },
      checks,
      DEFAULT_DOMAIN,
      refusing,
      (p) => (rejected = p),
      silent,
    );
    try {
      await source.start();
      writeFileSync(join(dir, "policy.yaml"), denyPolicy("/refuse-me"));
      await until("a NACK", () => (nacks.length > 0 ? true : undefined));
      assert.match(rejected, /refused: the configuration was not applied; keeping the last good configuration/);
      assert.ok(discovery.ads.state().some((c) => c.node.id.includes("c.foo") && [...c.subscriptions.values()].some((s) => s.nacked)));
    } finally {
      source.stop();
    }
  });
});
