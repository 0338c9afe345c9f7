import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { tempDir } from "../support/processes.ts";
import { send, stats } from "./security_support.ts";

// Issue 25: the process-wide safety net. A real agent runs with a test hook
// (test/support/inject_request_fault.mjs, loaded by NODE_OPTIONS) that throws
// inside Node's delivery of an upstream response when the request asks for
// it — the shape of the crash issue 25 found. The request that hit the
// error is answered 500, the error is logged and counted on /stats, and the
// agent goes on serving.

const HOOK = pathToFileURL(join(import.meta.dirname, "..", "support", "inject_request_fault.mjs")).href;

describe("the safety net keeps the sidecar serving after an uncaught error in a request path (issue 25)", { timeout: 300_000 }, () => {
  const dir = tempDir("mesh-safety-net-");
  let ca: Awaited<ReturnType<typeof startMeshCa>> | undefined;
  let w: SecureWorkload;

  before(async () => {
    mkdirSync(join(dir, "config"));
    ca = await startMeshCa();
    w = await startSecureWorkload({ name: "app", namespace: "foo", configDir: join(dir, "config"), ca, env: { NODE_OPTIONS: `--import ${HOOK}` } });
  });
  after(async () => {
    await w?.stop();
    await ca?.stop();
  });

  it("answers 500 to the request that hit the error, counts it, and serves the next requests", async () => {
    const before = (await stats(w.adminUrl)).get("server.uncaught_request_errors");
    assert.equal(before, 0);
    for (let i = 1; i <= 3; i++) {
      const faulty = await send(w.inbound, { path: "/faulty", headers: { "x-inject-fault": "uncaught" } });
      assert.equal(faulty.outcome === "http" ? faulty.status : faulty.error, 500);
      assert.equal(w.sidecar.proc.exitCode, null, `the agent exited:\n${w.sidecar.output().slice(-2000)}`);
      const ok = await send(w.inbound, { path: "/fine" });
      assert.equal(ok.outcome === "http" ? ok.status : ok.error, 200);
      assert.equal((await stats(w.adminUrl)).get("server.uncaught_request_errors"), i);
    }
    assert.match(w.sidecar.output(), /inbound: uncaught exception in a request path, request ended, serving on \(3 so far\): Error: injected fault in a request path/);
  });
});
