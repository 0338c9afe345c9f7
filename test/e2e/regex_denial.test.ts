import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { type Outcome, get, send } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// Issue 25 item 2: a VirtualService regex upstream accepts, `/v1/(\w+\.?)+`,
// against a ~40-character path that does not match. A backtracking engine
// takes about 2^n steps for it (hours at 40 characters); the linear engine
// answers at once. The same for the admin port's `filter=` and `name_regex=`.

const EVIL = String.raw`/v1/(\w+\.?)+`;
const NEAR_MISS = `/v1/${"a".repeat(36)}!`;

const config = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {selector: {app: reviews}, ports: [{name: http, port: 9080, targetPort: 80}]}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
  - match: [{uri: {regex: "${EVIL.replaceAll("\\", "\\\\")}"}}]
    directResponse: {status: 200, body: {string: "uri regex"}}
  - match: [{headers: {x-version: {regex: "(\\\\w+\\\\.?)+"}}}]
    directResponse: {status: 200, body: {string: "header regex"}}
  - match: [{queryParams: {v: {regex: "(\\\\w+\\\\.?)+"}}}]
    directResponse: {status: 200, body: {string: "query regex"}}
  - match: [{authority: {regex: "(\\\\w+\\\\.?)+"}}]
    directResponse: {status: 200, body: {string: "authority regex"}}
  - directResponse: {status: 204}
`;

// Far above what the linear engine needs on a loaded machine, far below
// what the backtracking one would (2^36 steps).
const DEADLINE_MS = 20_000;

async function within<T>(what: string, call: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  try {
    return await Promise.race([call(), late]);
  } finally {
    clearTimeout(timer);
  }
}

const answer = (o: Outcome) => {
  if (o.outcome !== "http") throw new Error(`no HTTP answer: ${o.error}`);
  return { status: o.status, body: o.body };
};

describe("regex denial of service (issue 25 item 2)", { timeout: 300_000 }, () => {
  const dir = tempDir("mesh-regex-dos-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let sleep: SecureWorkload;
  const call = (path: string, headers: Record<string, string> = {}, host = "reviews.default:9080") =>
    within(`GET ${path}`, async () => answer(await send(sleep.outbound, { host, path, headers })));

  before(async () => {
    writeFileSync(join(dir, "resources.yaml"), config);
    ca = await startMeshCa();
    sleep = await startSecureWorkload({ configDir: dir, ca, name: "sleep", namespace: "default" });
  });
  after(async () => {
    await sleep?.stop();
    await ca?.stop();
  });

  it("a route regex that backtracks in JavaScript answers promptly, matching as RE2 would", async () => {
    assert.deepEqual(await call(NEAR_MISS), { status: 204, body: "" }, "the near miss falls through to the default route");
    assert.deepEqual(await call("/v1/books.v2.list"), { status: 200, body: "uri regex" });
    // A regex is a full match: a suffix outside the pattern does not match.
    assert.equal((await call("/v1/books/list")).status, 204);
  });

  it("header, query parameter and authority regexes too", async () => {
    const near = `${"a".repeat(36)}!`;
    assert.equal((await call("/x", { "x-version": near })).status, 204);
    assert.deepEqual(await call("/x", { "x-version": "v1.beta" }), { status: 200, body: "header regex" });
    assert.equal((await call(`/x?v=${near}`)).status, 204);
    assert.deepEqual(await call("/x?v=v1.beta"), { status: 200, body: "query regex" });
    // The authority regex sees every request that gets that far; `:9080` makes the full name a near miss.
    assert.equal((await call("/x", {}, "reviews.default.svc.cluster.local:9080")).status, 204);
  });

  it("the sidecar still answers after the near misses", async () => {
    assert.deepEqual(await call("/v1/ok"), { status: 200, body: "uri regex" });
    assert.equal((await within("/ready", () => get(`${sleep.adminUrl}/ready`))).status, 200);
  });

  it("admin /stats?filter= and /config_dump?name_regex= run on the linear engine", async () => {
    // Stat names such as `hub_client.total_check_calls` are near misses of this pattern.
    const evil = encodeURIComponent(String.raw`^(\w+\.?)+!$`);
    const stats = await within("/stats?filter", () => get(`${sleep.adminUrl}/stats?filter=${evil}`));
    assert.deepEqual([stats.status, stats.body], [200, ""]);
    const prom = await within("/stats/prometheus?filter", () => get(`${sleep.adminUrl}/stats/prometheus?filter=${evil}`));
    assert.equal(prom.status, 200);
    const dump = await within("/config_dump?name_regex", () => get(`${sleep.adminUrl}/config_dump?resource=listeners&name_regex=${evil}`));
    assert.deepEqual([dump.status, JSON.parse(dump.body)], [200, { configs: [] }]);
    // What the engine refuses (a backreference) is a 400 naming the reason, as a bad regex was.
    const refused = await get(`${sleep.adminUrl}/stats?filter=${encodeURIComponent(String.raw`(a)\1`)}`);
    assert.equal(refused.status, 400);
    assert.match(refused.body, /^Invalid regex: unsupported regex construct: backreference/);
    const kept = JSON.parse((await get(`${sleep.adminUrl}/stats?format=json&filter=${encodeURIComponent("config\\.applied$")}`)).body);
    assert.deepEqual(
      kept.stats.map((s: { name: string }) => s.name),
      ["config.applied"],
    );
  });
});
