import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { OFFLINE, analyze } from "./analyze_support.ts";
import { FIXTURES } from "./cli_golden_support.ts";

// Issue 28, "Done when": `meshctl analyze --use-kube=false -A` on every
// upstream sample of bookinfo, httpbin and sleep (fixtures/upstream/samples:
// upstream's files renamed, each saying so in its first line) and on the
// security tasks (fixtures/upstream/security-tasks, each task's resources with
// their httpbin and sleep workloads; fixtures/upstream/security.yaml with the
// earlier bookinfo fixtures) reports no Error and exits 0 at
// `--failure-threshold Error`. Each sample is analyzed as its task applies
// it: bookinfo's routing files with the application (every platform file:
// the versions the rules route to), its gateway and destination-rule-all.
// Left out: networking/certmanager-gateway.yaml, whose VirtualService routes
// to the Service cert-manager creates at run time (upstream's analyzer
// reports that host as not found too).

const SAMPLES = join("upstream", "samples");
const TASKS = join("upstream", "security-tasks");
const list = (dir: string) =>
  readdirSync(join(FIXTURES, SAMPLES, dir))
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f) => join(SAMPLES, dir, f));

const app = list("bookinfo/platform/kube");
const routing = [join(SAMPLES, "bookinfo/networking/bookinfo-gateway.yaml"), join(SAMPLES, "bookinfo/networking/destination-rule-all.yaml")];
const httpbin = join(SAMPLES, "httpbin/httpbin.yaml");
const RUNS: string[][] = [
  app,
  ...app.map((f) => [f]),
  ...list("bookinfo/networking")
    .filter((f) => !f.endsWith("certmanager-gateway.yaml"))
    .map((f) => [...app, ...routing, f]),
  ...list("httpbin").map((f) => (f === httpbin ? [f] : [httpbin, f])),
  [httpbin, ...list("httpbin/sample-client"), ...list("httpbin/gateway-api")],
  list("sleep"),
  list("curl"),
  readdirSync(join(FIXTURES, "upstream"))
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f) => join("upstream", f)),
  ...readdirSync(join(FIXTURES, TASKS))
    .filter((f) => f.endsWith(".yaml") && f !== "workloads.yaml")
    .sort()
    .map((f) => [join(TASKS, "workloads.yaml"), join(TASKS, f)]),
];

describe("meshctl analyze on upstream's samples (renamed)", () => {
  it("reports no Error and exits 0 at --failure-threshold Error on each sample as its task applies it", async () => {
    for (const files of RUNS) {
      const run = await analyze([OFFLINE, "-A", "-o", "json", "--failure-threshold", "Error", ...files]);
      const messages = JSON.parse(run.stdout) as Array<{ code: string; level: string; origin: string; message: string }>;
      assert.deepEqual(
        messages.filter((m) => m.level === "Error"),
        [],
        files.at(-1),
      );
      assert.equal(run.status, 0, `${files.at(-1)}: ${run.stderr}`);
    }
    assert.ok(RUNS.length > 40);
  });
});
