import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { OFFLINE, analyze } from "./analyze_support.ts";
import { FIXTURES } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";
import { tempDir } from "../support/processes.ts";

// Issue 11, "Done when": upstream's bookinfo, httpbin and security-task samples,
// renamed (group domain mesh.io, root namespace mesh-system), are accepted by
// `meshctl validate` in every served version and analyzed without an Error or
// an "unknown field".

const DIR = join(FIXTURES, "upstream");
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .sort();
const VERSIONS: Record<string, readonly string[]> = {
  "networking.mesh.io": ["v1alpha3", "v1beta1", "v1"],
  "security.mesh.io": ["v1beta1", "v1"],
};

function validate(file: string) {
  return meshctlInProcess(["validate", "-f", file]);
}

describe("upstream samples (renamed)", async () => {
  const tmp = tempDir("mesh-upstream-");
  for (const [group, versions] of Object.entries(VERSIONS)) {
    for (const version of versions) {
      it(`meshctl validate accepts every sample with ${group} as ${version}`, async () => {
        for (const f of FILES) {
          const text = readFileSync(join(DIR, f), "utf8").replace(
            new RegExp(`apiVersion: ${group.replace(/\./g, "\\.")}/v[0-9a-z]+`, "g"),
            `apiVersion: ${group}/${version}`,
          );
          const file = join(tmp, `${group}-${version}-${f}`);
          writeFileSync(file, text);
          const run = await validate(file);
          assert.equal(run.status, 0, `${f}: ${run.stderr}`);
          assert.match(run.stdout + run.stderr, /is valid/);
        }
      });
    }
  }

  it("meshctl analyze --use-kube=false: no Error and no unknown field on the samples", async () => {
    const run = await analyze([OFFLINE, "-A", "-o", "json", ...FILES.map((f) => join("upstream", f))]);
    const messages = JSON.parse(run.stdout) as Array<{ code: string; level: string; message: string }>;
    assert.deepEqual(
      messages.filter((m) => m.level === "Error"),
      [],
    );
    assert.deepEqual(
      messages.filter((m) => /unknown field/.test(m.message)),
      [],
    );
    // The routing tasks applied in order: each later VirtualService replaces the earlier one, with a warning.
    assert.equal(messages.filter((m) => /is defined again/.test(m.message)).length, 3);
  });

  it("rename hints for upstream's names users paste: ISTIO_MUTUAL and the istio: ingressgateway selector", async () => {
    const file = join(tmp, "renames.yaml");
    writeFileSync(
      file,
      `apiVersion: networking.mesh.io/v1\nkind: DestinationRule\nmetadata: {name: r, namespace: default}\nspec: {host: reviews, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}\n---\napiVersion: networking.mesh.io/v1\nkind: Gateway\nmetadata: {name: g, namespace: default}\nspec: {selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]}\n`,
    );
    const run = await validate(file);
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /upstream's ISTIO_MUTUAL is MESH_MUTUAL in this mesh/);
    assert.match(run.stderr, /upstream's gateway label: this mesh's gateways carry "mesh: ingressgateway"/);
  });
});
