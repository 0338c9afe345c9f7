// The filter as a library, as a Node developer gets it: `npm pack`, the
// tarball installed into a fresh project outside the repository together with
// express@5, fastify@5, typescript and @types/express from the registry (one
// install for every case), then a real Express app and a real Fastify app
// with the filter in front of a real `hubs server` (the package's own bin): allow, a hub rule's
// denial, a quota, the reports in the hub's access log, FAIL_OPEN and
// FAIL_CLOSE with the hub down and the held reports delivered when it comes
// back, close() delivering what is pending, and the declarations checked by
// tsc in that project.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { delimiter, join, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Daemon, runProcess, startDaemon, tempDir, waitFor } from "../support/processes.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const FIXTURES = join(import.meta.dirname, "fixtures");
const FRAMEWORKS = ["express", "fastify"] as const;
type Framework = (typeof FRAMEWORKS)[number];
const SERVICE = "petstore.demo.svc.cluster.local";

/** The machine's npm and a clean environment: no node_modules/.bin of the repository, no loader flags, no NODE_PATH. */
const CLEAN_ENV: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries({
    ...process.env,
    PATH: (process.env.PATH ?? "")
      .split(delimiter)
      .filter((p) => !p.includes(`node_modules${sep}.bin`))
      .join(delimiter),
  }).filter(([k]) => k !== "NODE_OPTIONS" && k !== "NODE_PATH"),
);

/**
 * The hub client configuration of one app. `held`: reports wait in the
 * module (a batch time of 10 minutes) until close(); otherwise batches go
 * out every 0.1 s. The quota name is the app's own, so apps do not share a count.
 */
function clientConfig(policy: "FAIL_OPEN" | "FAIL_CLOSE", quota: string, held: boolean): string {
  return `apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: {name: app, namespace: demo}
spec:
  defaultDestinationService: ${SERVICE}
  transport:
    disableQuotaCache: true
    statsUpdateInterval: 0.1s
    reportBatchMaxTime: ${held ? "600s" : "0.1s"}
    networkFailPolicy: {policy: ${policy}, maxRetry: 2, baseRetryWait: 0.050s, maxRetryWait: 0.2s}
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: {name: petstore, namespace: demo}
spec:
  attributes: {attributes: {api.service: {stringValue: petstore}}}
  patterns:
  - {httpMethod: GET, uriTemplate: "/pets/{id}", attributes: {attributes: {api.operation: {stringValue: getPet}}}}
  apiKeys: [{query: key}, {header: x-api-key}]
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpecBinding
metadata: {name: petstore, namespace: demo}
spec: {services: [{name: petstore}], apiSpecs: [{name: petstore}]}
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpec
metadata: {name: requests, namespace: demo}
spec:
  rules:
  - match: [{clause: {request.path: {prefix: /limited}}}]
    quotas: [{quota: ${quota}, charge: 1}]
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpecBinding
metadata: {name: requests, namespace: demo}
spec: {services: [{name: petstore}], quotaSpecs: [{name: requests}]}
`;
}

function hubRules(accessLog: string): string {
  const quotas = FRAMEWORKS.map(
    (f) => `---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: limited-${f}, namespace: mesh-system}
spec:
  match: [{clause: {request.path: {prefix: /limited}}}]
  actions: [{quota: {name: requests-${f}}}]
---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: requests-${f}, namespace: mesh-system}
spec: {maxAmount: 3, validDuration: 600s}
`,
  ).join("");
  return `apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: deny-admin, namespace: mesh-system}
spec:
  match: [{clause: {request.path: {prefix: /admin}}}]
  actions: [{deny: {code: PERMISSION_DENIED, message: "admins only"}}]
---
apiVersion: config.mesh.io/v1alpha2
kind: HubAccessLog
metadata: {name: all, namespace: mesh-system}
spec: {path: ${accessLog}}
${quotas}`;
}

interface Answer {
  status: number;
  body: string;
}

/** One GET on a fresh connection. */
function get(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { connection: "close" }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

type LogLine = { attributes: Record<string, { stringValue?: string; int64Value?: string }> };

function accessLog(path: string): LogLine[] {
  try {
    return readFileSync(path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogLine);
  } catch {
    return [];
  }
}

const logged = (path: string, requestPath: string) => accessLog(path).filter((l) => l.attributes["request.path"]?.stringValue === requestPath);

describe("the package as a library: Express 5 and Fastify 5 apps with the filter, installed from the tarball", () => {
  const work = tempDir("mesh-embed-");
  const project = join(work, "app");
  const hubDir = join(work, "hub");
  const log = join(hubDir, "access.jsonl");
  let bin = "";
  let shipped: string[] = [];
  let hub: Daemon<{ grpcPort: number; monitoringPort: number }> | undefined;
  /** Each framework's app: port 0 runs FAIL_CLOSE with held reports, port 1 FAIL_OPEN. */
  const apps = new Map<Framework, Daemon<[number, number]>>();

  const startHub = (port = 0) =>
    startDaemon<{ grpcPort: number; monitoringPort: number }>(
      join(bin, "hubs"),
      [
        "server",
        "--address",
        `tcp://127.0.0.1:${port}`,
        "--monitoringPort",
        "0",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
        "--configStoreURL",
        `fs://${hubDir}`,
        "--configDefaultNamespace",
        "mesh-system",
      ],
      "hubs listening ",
      undefined,
      CLEAN_ENV,
    );

  before(async () => {
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT, env: CLEAN_ENV, encoding: "utf8", maxBuffer: 64 << 20 });
    const [info] = JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>;
    shipped = info.files.map((f) => f.path);
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "embed-check", version: "1.0.0", private: true, type: "module" }));
    const typescript = JSON.parse(readFileSync(join(ROOT, "node_modules", "typescript", "package.json"), "utf8")).version as string;
    const install = await runProcess(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        join(work, info.filename),
        "express@5",
        "fastify@5",
        `typescript@${typescript}`,
        "@types/node@20",
        "@types/express@5",
      ],
      { cwd: project, env: CLEAN_ENV },
    );
    assert.equal(install.status, 0, install.stdout + install.stderr);
    bin = join(project, "node_modules", ".bin");
    for (const f of ["express_app.mjs", "fastify_app.mjs", "types_check.mts"]) copyFileSync(join(FIXTURES, f), join(project, f));
    mkdirSync(hubDir);
    writeFileSync(join(hubDir, "rules.yaml"), hubRules(log));
    hub = await startHub();
    const address = `127.0.0.1:${hub.listening.grpcPort}`;
    await Promise.all(
      FRAMEWORKS.map(async (f) => {
        const held = join(work, `${f}-held.yaml`);
        const open = join(work, `${f}-open.yaml`);
        writeFileSync(held, clientConfig("FAIL_CLOSE", `requests-${f}`, true));
        writeFileSync(open, clientConfig("FAIL_OPEN", `requests-${f}`, false));
        apps.set(
          f,
          await startDaemon<[number, number]>(join(project, `${f}_app.mjs`), [address, held, open], "app listening ", undefined, {
            ...CLEAN_ENV,
            NODE_ENV: "production",
          }),
        );
      }),
    );
  });

  after(async () => {
    await Promise.all([...apps.values()].map((a) => a.stop()));
    await hub?.stop();
  });

  it("the tarball ships the library's entries and declarations, and no test folder", () => {
    for (const p of [
      "build/out/mesh-policy-filter.mjs",
      "build/out/mesh-policy-filter-fastify.mjs",
      "build/types/index.d.ts",
      "build/types/fastify.d.ts",
      "build/types/types.d.ts",
      "CHANGELOG.md",
      "docs/embedding.md",
    ])
      assert.ok(shipped.includes(p), `${p} is not shipped`);
    assert.deepEqual(
      shipped.filter((p) => /(^|\/)test\//.test(p)),
      [],
    );
    const manifest = JSON.parse(readFileSync(join(project, "node_modules", "mesh-policy-filter", "package.json"), "utf8"));
    assert.equal(manifest.private, undefined);
  });

  it("importing the package runs nothing: no output, no listener, the process ends by itself", async () => {
    const script =
      "const lib = await import('mesh-policy-filter'); const plugin = await import('mesh-policy-filter/fastify'); console.log(JSON.stringify([Object.keys(lib), typeof plugin.default]));";
    const run = await runProcess(process.execPath, ["--input-type=module", "--eval", script], { cwd: project, env: CLEAN_ENV });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.deepEqual(JSON.parse(run.stdout), [["createFilter"], "function"]);
  });

  for (const f of FRAMEWORKS) {
    it(`${f}: allowed 200, the hub's denial 403 with its message, the quota 429`, async () => {
      const [port] = apps.get(f)!.listening;
      const allowed = await get(port, `/pets/1?key=held-${f}`);
      assert.equal(allowed.status, 200, allowed.body);
      assert.deepEqual(JSON.parse(allowed.body), { id: "1", attributes: false });
      const denied = await get(port, "/admin");
      assert.equal(denied.status, 403);
      assert.equal(denied.body, "PERMISSION_DENIED:admins only");
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await get(port, `/limited/${i}`)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const exhausted = await get(port, "/limited/9");
      assert.equal(exhausted.body, `RESOURCE_EXHAUSTED:Quota is exhausted for: requests-${f}`);
    });
  }

  it("fastify: the plugin's hooks cover its own context, not the routes of the root", async () => {
    const [port] = apps.get("fastify")!.listening;
    assert.deepEqual(await get(port, "/admin/outside"), { status: 200, body: "not filtered" });
  });

  it("each request's report reaches the hub's access log with the attributes the configuration derives", async () => {
    for (const f of FRAMEWORKS) {
      const [, port] = apps.get(f)!.listening;
      assert.equal((await get(port, `/pets/7?key=alice-${f}`)).status, 200);
    }
    for (const f of FRAMEWORKS) {
      const [line] = await waitFor(`the report of ${f}'s request`, () => {
        const lines = logged(log, `/pets/7?key=alice-${f}`);
        return lines.length > 0 ? lines : undefined;
      });
      assert.equal(line.attributes["api.operation"]?.stringValue, "getPet");
      assert.equal(line.attributes["api.service"]?.stringValue, "petstore");
      assert.equal(line.attributes["request.api_key"]?.stringValue, `alice-${f}`);
      assert.equal(line.attributes["response.code"]?.int64Value, "200");
      assert.equal(line.attributes["request.method"]?.stringValue, "GET");
      assert.ok(Number(line.attributes["response.size"]?.int64Value) > 0, "the response's size");
    }
  });

  it("docs/embedding.md's Express and Fastify examples paste and run", async () => {
    const docs = readFileSync(join(ROOT, "docs", "embedding.md"), "utf8");
    mkdirSync(join(project, "mesh-config"));
    writeFileSync(join(project, "mesh-config", "config.yaml"), clientConfig("FAIL_OPEN", "requests-docs", false));
    for (const f of FRAMEWORKS) {
      const heading = `\n## ${f === "express" ? "Express" : "Fastify"}\n`;
      const block = /```js\n([\s\S]*?)```/.exec(docs.slice(docs.indexOf(heading)))![1];
      assert.ok(block.split("\n").length <= 18, `the ${f} example is short`);
      // The example's fixed ports become the test's (the hub's, any free one for the app), and
      // ./mesh-config the project's (the example runs with the test's working directory).
      const source = block
        .replace("127.0.0.1:9091", `127.0.0.1:${hub!.listening.grpcPort}`)
        .replace("./mesh-config", join(project, "mesh-config"))
        .replace("listen(3000", "listen(0")
        .replace("port: 3001", "port: 0");
      writeFileSync(join(project, `example-${f}.mjs`), source);
      const example = await startDaemon<number>(join(project, `example-${f}.mjs`), [], "listening on ", undefined, CLEAN_ENV);
      try {
        assert.deepEqual(await get(example.listening, `/pets/1?key=docs-${f}`), { status: 200, body: '{"id":"1"}' });
        assert.deepEqual(await get(example.listening, `/admin/${f}`), { status: 403, body: "PERMISSION_DENIED:admins only" });
      } finally {
        assert.equal(await example.stop(), 0, example.output());
      }
      assert.equal(logged(log, `/pets/1?key=docs-${f}`).length, 1, `the ${f} example's report, delivered by close()`);
    }
  });

  it("hub down: FAIL_OPEN serves, FAIL_CLOSE answers 503 after the retries; back up, the held reports are delivered", async () => {
    const port = hub!.listening.grpcPort;
    assert.equal(await hub!.stop(), 0);
    for (const f of FRAMEWORKS) {
      const [closed, open] = apps.get(f)!.listening;
      const served = await get(open, `/pets/outage-${f}?key=k`);
      assert.equal(served.status, 200, served.body);
      const refused = await get(closed, `/pets/outage-${f}?key=k`);
      assert.equal(refused.status, 503);
      assert.match(refused.body, /^UNAVAILABLE:upstream connect error/);
      const stats = JSON.parse((await get(open, "/_stats")).body) as Record<string, number>;
      assert.ok(stats["hub_transport.retries"] >= 2, JSON.stringify(stats));
      assert.ok(stats["hub_transport.failed_calls"] >= 1, JSON.stringify(stats));
    }
    assert.deepEqual(
      FRAMEWORKS.flatMap((f) => logged(log, `/pets/outage-${f}?key=k`)),
      [],
    );
    hub = await startHub(port);
    const monitoring = hub.listening.monitoringPort;
    for (const f of FRAMEWORKS) {
      await waitFor(`the report of ${f}'s request served while the hub was down`, () => logged(log, `/pets/outage-${f}?key=k`).length > 0);
    }
    const metrics = (await get(monitoring, "/metrics")).body;
    const reports = metrics
      .split("\n")
      .filter((l) => l.startsWith("grpc_server_handled_total") && l.includes('grpc_method="Report"') && l.includes('grpc_code="OK"'));
    assert.ok(reports.length > 0 && Number(reports[0].split(" ").pop()) >= 2, `the restarted hub took the resent report batches:\n${reports.join("\n")}`);
  });

  it("close() delivers every pending report", async () => {
    // Only the FAIL_CLOSE apps (reports held for 10 minutes) were asked these: nothing of them reached the hub yet.
    const heldPaths = [...FRAMEWORKS.map((f) => `/pets/1?key=held-${f}`), "/admin", "/limited/0", "/limited/3"];
    assert.deepEqual(
      heldPaths.filter((p) => logged(log, p).length > 0),
      [],
      "reported before close()",
    );
    assert.equal(
      FRAMEWORKS.flatMap((f) => logged(log, `/pets/outage-${f}?key=k`)).filter((l) => l.attributes["response.code"]?.int64Value === "503").length,
      0,
    );
    await Promise.all([...apps.values()].map(async (a) => assert.equal(await a.stop(), 0, a.output())));
    apps.clear();
    for (const f of FRAMEWORKS) {
      assert.equal(logged(log, `/pets/1?key=held-${f}`).length, 1, `the allowed request of ${f}`);
      assert.ok(
        logged(log, `/pets/outage-${f}?key=k`).some((l) => l.attributes["response.code"]?.int64Value === "503"),
        `the refused request of ${f}`,
      );
    }
    const denials = logged(log, "/admin").filter((l) => l.attributes["response.code"]?.int64Value === "403");
    assert.equal(denials.length, 2, "one denial per framework");
    for (let i = 0; i < 4; i++) assert.equal(logged(log, `/limited/${i}`).length, 2, `/limited/${i}: one report per framework`);
  });

  it("tsc --noEmit passes on a TypeScript file that uses every exported type (moduleResolution nodenext)", async () => {
    const types = readFileSync(join(project, "node_modules", "mesh-policy-filter", "build", "types", "types.d.ts"), "utf8");
    const exported = [...types.matchAll(/^export (?:declare )?(?:interface|type) (\w+)/gm)].map((m) => m[1]);
    const source = readFileSync(join(project, "types_check.mts"), "utf8");
    assert.ok(exported.length >= 15, exported.join(", "));
    assert.deepEqual(
      exported.filter((name) => !new RegExp(`\\btype ${name}\\b`).test(source)),
      [],
      "types the check file does not use",
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "es2022", module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, types: ["node"] },
        files: ["types_check.mts"],
      }),
    );
    const tsc = await runProcess(process.execPath, [join(project, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], {
      cwd: project,
      env: CLEAN_ENV,
    });
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  });
});
