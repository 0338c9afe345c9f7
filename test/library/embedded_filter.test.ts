// The library from the source, against a real `hubs server`: the options
// decoded at the edge (errors naming the document and field), the middleware
// over HTTP/2 compatibility requests, check() with connection facts, the
// counters in the application's prom-client registry, close().
import assert from "node:assert/strict";
import { connect, createServer, type Http2Server } from "node:http2";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { createFilter } from "../../host/library/index.ts";
import type { Filter } from "../../host/library/types.ts";
import { type HubProcess, startHub, tempDir } from "../hubs/support/hub_process.ts";
import { waitFor } from "../support/processes.ts";
import { HUB_RULES, sidecarConfig } from "../e2e/sidecar_support.ts";

const dir = tempDir("mesh-library-");
const accessLog = join(dir, "hub", "access.jsonl");

/** The demo configuration as objects, as an application may pass it. */
const CONFIG_DOCUMENTS = [
  {
    apiVersion: "config.mesh.io/v1alpha2",
    kind: "HttpClientConfig",
    metadata: { name: "app", namespace: "demo" },
    spec: {
      defaultDestinationService: "petstore.demo.svc.cluster.local",
      transport: { reportBatchMaxTime: "0.1s", networkFailPolicy: { policy: "FAIL_CLOSE" } },
    },
  },
  {
    apiVersion: "config.mesh.io/v1alpha2",
    kind: "HTTPAPISpec",
    metadata: { name: "petstore", namespace: "demo" },
    spec: {
      patterns: [{ httpMethod: "GET", uriTemplate: "/pets/{id}", attributes: { attributes: { "api.operation": { stringValue: "getPet" } } } }],
      apiKeys: [{ header: "x-api-key" }],
    },
  },
  {
    apiVersion: "config.mesh.io/v1alpha2",
    kind: "HTTPAPISpecBinding",
    metadata: { name: "petstore", namespace: "demo" },
    spec: { services: [{ name: "petstore" }], apiSpecs: [{ name: "petstore" }] },
  },
];

function h2get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const req = session.request({ ":path": path, ...headers });
    let status = 0;
    let body = "";
    req.setEncoding("utf8");
    req.on("response", (h) => (status = Number(h[":status"])));
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      session.close();
      resolve({ status, body });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("createFilter: options decoded once, with errors naming the document and field", () => {
  it("a configuration the decoder refuses rejects naming file, resource and field path", async () => {
    const file = join(dir, "bad.yaml");
    writeFileSync(file, sidecarConfig("FAIL_OPEN").replace('uriTemplate: "/pets/{id}"', 'uriTemplate: "/pets/{id"'));
    await assert.rejects(createFilter({ config: file, hub: "127.0.0.1:9" }), (e: Error) => {
      assert.match(e.message, /bad\.yaml: HTTPAPISpec demo\/petstore: spec\.patterns\[0\]\.uriTemplate/);
      return true;
    });
  });

  it("documents given as objects are named options.config; an HttpClientConfig is required", async () => {
    await assert.rejects(createFilter({ config: [CONFIG_DOCUMENTS[1]], hub: "127.0.0.1:9" }), /options\.config.*HttpClientConfig/);
    const typo = [{ ...CONFIG_DOCUMENTS[0], spec: { transport: { networkFailPolicy: { policy: "FAIL_SOMETIMES" } } } }];
    await assert.rejects(
      createFilter({ config: typo, hub: "127.0.0.1:9" }),
      /options\.config: HttpClientConfig demo\/app: spec\.transport\.networkFailPolicy\.policy/,
    );
  });

  it("a hub address that cannot be used names the option", async () => {
    await assert.rejects(createFilter({ config: CONFIG_DOCUMENTS, hub: "hub" }), /options\.hub: the port is missing/);
    await assert.rejects(
      createFilter({ config: CONFIG_DOCUMENTS, hub: { check: "127.0.0.1:9" } }),
      /options\.hub\.address: expected the report cluster's address/,
    );
    await assert.rejects(
      createFilter({ config: CONFIG_DOCUMENTS, hub: { address: "127.0.0.1:9", tls: { caFile: join(dir, "none.pem"), certFile: "c", keyFile: "k" } } }),
      /options\.hub\.tls\.caFile: .*none\.pem: ENOENT/,
    );
  });
});

describe("the embedded filter against hubs server", () => {
  let hub: HubProcess;
  let filter: Filter;
  let server: Http2Server;
  let port = 0;
  const registry = new Registry();

  before(async () => {
    const hubDir = join(dir, "hub");
    mkdirSync(hubDir);
    writeFileSync(
      join(hubDir, "rules.yaml"),
      `${HUB_RULES}---\napiVersion: config.mesh.io/v1alpha2\nkind: HubAccessLog\nmetadata: {name: all, namespace: mesh-system}\nspec: {path: ${accessLog}}\n`,
    );
    hub = await startHub(["--configStoreURL", `fs://${hubDir}`, "--configDefaultNamespace", "mesh-system"]);
    filter = await createFilter({ config: CONFIG_DOCUMENTS, hub: `127.0.0.1:${hub.listeners.grpcPort}`, registry, metricsPrefix: "app_" });
    const middleware = filter.middleware({ skip: (req) => req.url === "/healthz" });
    server = createServer((req, res) => middleware(req, res, () => res.end(`served ${req.url}`)));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });

  after(async () => {
    server?.close();
    await filter?.close();
    await hub?.stop();
  });

  it("the middleware over HTTP/2 compatibility requests: allowed, denied as the sidecar denies, skipped", async () => {
    assert.deepEqual(await h2get(port, "/pets/1", { "x-api-key": "h2-key" }), { status: 200, body: "served /pets/1" });
    assert.deepEqual(await h2get(port, "/admin/users"), { status: 403, body: "PERMISSION_DENIED:admins only" });
    assert.deepEqual(await h2get(port, "/healthz"), { status: 200, body: "served /healthz" });
    const line = await waitFor("the HTTP/2 request's report", () => {
      return accessLogLines().find((l) => l.attributes["request.path"]?.stringValue === "/pets/1");
    });
    assert.equal(line.attributes["request.api_key"]?.stringValue, "h2-key");
    assert.equal(line.attributes["api.operation"]?.stringValue, "getPet");
    assert.equal(line.attributes["context.protocol"]?.stringValue, "http");
    assert.equal(
      accessLogLines().some((l) => l.attributes["request.path"]?.stringValue === "/healthz"),
      false,
      "a skipped request is not reported",
    );
  });

  it("check() with connection facts; its report carries them and the outcome given", async () => {
    const decision = await filter.check({
      method: "GET",
      path: "/pets/2",
      headers: { "X-Api-Key": "direct", host: "petstore" },
      sourceAddress: "10.1.2.3",
      sourcePort: 4567,
    });
    assert.equal(decision.allowed, true);
    assert.equal(decision.status, 200);
    decision.report({ status: 201, responseBytes: 42, durationMs: 5, headers: { "X-Served-By": "test", "set-cookie": ["a=1", "b=2"] } });
    decision.report({ status: 500 });
    const denied = await filter.check({ method: "GET", path: "/admin" });
    assert.deepEqual(
      { allowed: denied.allowed, status: denied.status, body: denied.body, type: denied.headers["content-type"] },
      { allowed: false, status: 403, body: "PERMISSION_DENIED:admins only", type: "text/plain" },
    );
    denied.report();
    const line = await waitFor("the report of check()'s request", () => accessLogLines().find((l) => l.attributes["request.path"]?.stringValue === "/pets/2"));
    assert.equal(line.attributes["response.code"]?.int64Value, "201");
    assert.equal(line.attributes["response.size"]?.int64Value, "42");
    assert.equal(line.attributes["source.port"]?.int64Value, "4567");
    assert.equal(line.attributes["request.host"]?.stringValue, "petstore");
    assert.equal(line.attributes["response.headers"]?.stringMapValue?.entries?.["x-served-by"], "test");
    assert.equal(accessLogLines().filter((l) => l.attributes["request.path"]?.stringValue === "/pets/2").length, 1, "reported once");
  });

  it("the counters in the application's registry, read when scraped", async () => {
    const text = await registry.metrics();
    const calls = /^app_hub_transport_calls_total (\d+)$/m.exec(text);
    assert.ok(calls && Number(calls[1]) >= 1, text);
    assert.match(text, /^app_hub_client_total_check_calls_total \d+$/m);
    // The module publishes its hub_client counters every statsUpdateInterval (10 s here); the host's count at once.
    const stats = filter.stats();
    assert.ok("hub_client.total_check_calls" in stats, JSON.stringify(stats));
    assert.ok(stats["hub_transport.calls"] >= 1, JSON.stringify(stats));
  });

  it("close() reports the decisions still open, unregisters the counters, and refuses new checks", async () => {
    const open = await filter.check({ method: "GET", path: "/pets/never-reported", headers: { "x-api-key": "k" } });
    assert.equal(open.allowed, true);
    await filter.close();
    assert.ok(accessLogLines().some((l) => l.attributes["request.path"]?.stringValue === "/pets/never-reported"));
    assert.equal(registry.getSingleMetric("app_hub_transport_calls_total"), undefined);
    await assert.rejects(filter.check({ method: "GET", path: "/pets/3" }), /closed/);
  });
});

type Line = { attributes: Record<string, { stringValue?: string; int64Value?: string; stringMapValue?: { entries?: Record<string, string> } }> };
function accessLogLines(): Line[] {
  if (!existsSync(accessLog)) return [];
  return readFileSync(accessLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}
