// disco-discovery's server options that shape connections and introspection:
// --keepaliveMaxServerConnectionAge ends a proxy's connection (it reconnects
// and is served again), ControlZ shows the connections and the configuration.
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DiscoveryServer } from "../../host/discovery/server.ts";
import { XdsConfigSource } from "../../host/proxy/xds_config.ts";
import { Logger } from "../../host/telemetry/logger.ts";
import { startTestDiscovery, testChecks, until } from "./support/in_process.ts";

describe("disco-discovery: connection age and ControlZ", { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "disco-options-"));
  const checks = testChecks();
  const logger = new Logger(["all", "default"], {
    asJson: false,
    callerScopes: new Set(),
    outputLevels: new Map([["default", "none"]]),
    stacktraceLevels: new Map(),
    targets: ["stderr"],
  });
  let discovery: DiscoveryServer;

  before(async () => {
    writeFileSync(join(dir, "empty.yaml"), "");
    discovery = await startTestDiscovery(dir, { maxConnectionAgeMs: 500, ctrlz: { address: "127.0.0.1", port: 0, logger } });
  });
  after(async () => {
    await discovery?.close();
    logger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an aged connection is closed after its grace; the proxy reconnects and is served again", async () => {
    const warnings: string[] = [];
    let applied = 0;
    const log = { info: () => {}, warn: (m: string) => warnings.push(m) };
    const source = new XdsConfigSource(
      discovery.listeners.grpc!,
      { id: "sidecar~127.0.0.1~a.foo~foo.svc.cluster.local", cluster: "a.foo" },
      checks,
      DEFAULT_DOMAIN,
      () => (applied++, true),
      () => {},
      log,
    );
    try {
      assert.equal(await source.start(), true);
      await until("the stream closed by the server", () => (warnings.some((w) => w.startsWith("control plane stream closed")) ? true : undefined));
      await until("served again on a new connection", () => (applied >= 2 ? true : undefined));
    } finally {
      source.stop();
    }
  });

  it("ControlZ serves the build, log levels, the configuration version and the connections", async () => {
    assert.match(discovery.listeners.ctrlz!, /^127\.0\.0\.1:\d+$/);
    const page = (await (await fetch(`http://${discovery.listeners.ctrlz}/json`)).json()) as {
      component: string;
      configuration: { version: number };
      connections: unknown[];
      logLevels: Record<string, string>;
    };
    assert.equal(page.component, "disco-discovery");
    assert.equal(page.configuration.version, 1);
    assert.ok(Array.isArray(page.connections));
    assert.ok("default" in page.logLevels);
  });
});
