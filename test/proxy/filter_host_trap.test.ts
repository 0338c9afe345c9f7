import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { FilterHost } from "../../host/proxy/filters/filter_host.ts";
import { tempDir } from "../support/processes.ts";

// Compiles the fixture with the project's own compiler, as a proxy-wasm
// module (no start section, abort routed to a trap). It runs in the fixtures'
// folder: in the project's, asc would read asconfig.json and compile the
// whole filter (its entries) into the fixture too, 13 s of CPU instead of 2.
function buildTrappingModule(): string {
  const out = join(tempDir("trap-"), "trapping.wasm");
  const asc = join(import.meta.dirname, "..", "..", "node_modules", "assemblyscript", "bin", "asc.js");
  const fixtures = join(import.meta.dirname, "fixtures");
  execFileSync(process.execPath, [asc, "trapping_filter.ts", "-o", out, "--exportStart", "_initialize", "--use", "abort=", "-O1"], {
    cwd: fixtures,
    stdio: "pipe",
  });
  return out;
}

describe("a filter that traps", () => {
  const wasm = buildTrappingModule();
  for (const [policy, failOpen] of [
    ["FAIL_OPEN", true],
    ["FAIL_CLOSE", false],
  ] as const) {
    it(`fails that request by the fail policy (${policy}), re-creates the VM, and keeps serving`, async () => {
      const logs: string[] = [];
      const host = new FilterHost({
        wasm,
        hub: { call: async () => ({ ok: false, code: 14, message: "unused", attempts: 1 }) },
        log: (level, message) => logs.push(`${level} ${message}`),
        failOpenOnTrap: () => failOpen,
      });
      assert.equal(host.configure("{}"), true);
      const first = await host.onRequestHeaders([[":path", "/"]], () => undefined);
      assert.equal(first.kind, "continue");
      const trapped = await host.onRequestHeaders([[":path", "/"]], () => undefined);
      assert.deepEqual(trapped, { kind: "failed", failOpen });
      assert.equal(host.restarts, 1);
      assert.ok(logs.some((l) => l.startsWith("critical") && l.includes("re-creating the filter VM")));
      // The fresh VM starts over: its first request continues again.
      const after = await host.onRequestHeaders([[":path", "/"]], () => undefined);
      assert.equal(after.kind, "continue");
      // The first request is still in flight with the old VM's stream id: the
      // new VM's requests must not be given it, or that request's response and
      // end would reach (and end) a request of the new VM.
      assert.ok(first.kind === "continue" && after.kind === "continue");
      assert.notEqual(after.id, first.id);
      host.finish(first.id);
      host.close();
    });
  }
});
