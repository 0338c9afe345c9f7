import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OFFLINE, analyze } from "./analyze_support.ts";

// Each analyzer's table of cases: analyzers_upstream.test.ts, analyzers_own.test.ts.
import { ANALYZERS } from "../../host/cli/meshctl/analyze/registry.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const TABLES = ["analyzers_upstream.test.ts", "analyzers_own.test.ts"].map((f) => readFileSync(join(import.meta.dirname, f), "utf8")).join("\n");

describe("meshctl analyze: analyzers and their messages", async () => {
  it("every analyzer has table cases, and every message name -L lists is expected by one (InternalError aside)", async () => {
    const listed = [...(await analyze(["-L"])).stdout.matchAll(/^\t\tMSH\d{4} \w+ (\w+)/gm)].map((m) => m[1]);
    assert.ok(listed.length >= 40);
    for (const a of ANALYZERS) assert.match(TABLES, new RegExp(`"?analyzer"?: ?"${a.name}"`), a.name);
    assert.deepEqual(
      [...new Set(listed)].filter((name) => !TABLES.includes(`["${name}", `)),
      [],
    );
  });

  it("messages name the resource and file:line of the offending field", async () => {
    const run = await analyze([OFFLINE, "analyze/virtualservice-gateways.bad.yaml"]);
    assert.equal(
      run.stdout,
      'Error [MSH0101] (VirtualService default/bookinfo analyze/virtualservice-gateways.bad.yaml:14) Referenced gateway not found: "bookinfo-gateway"\n' +
        "Warning [MSH0132] (VirtualService default/bookinfo analyze/virtualservice-gateways.bad.yaml:14) one or more host [bookinfo.example.com] defined in VirtualService default/bookinfo not found in Gateway default/bookinfo-gateway.\n",
    );
  });
});
