import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { CONFORMANCE_TOOLS, SYSTEM_TOOLS } from "../../build/system-tools.mjs";

// `npm install && npm test` passes on a fresh machine (issue 29): every
// program a test file starts is either Node's own (process.execPath, npm), a
// program of every Debian system (Essential: yes), or a row of
// build/system-tools.mjs, which `npm test` installs when missing. Likewise
// for the programs `npm run conformance` builds the proxy-wasm host with.

const ROOT = join(import.meta.dirname, "..", "..");
/** Programs of Debian's Essential packages (dash, coreutils, bash) and npm, which comes with Node. */
const ALWAYS_THERE = new Set(["sh", "sleep", "bash", "npm"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/** Program names given as literals to spawn/exec calls (and to prometheusProgram, which finds promtool's package). */
function spawnedPrograms(files: readonly string[]): Map<string, string[]> {
  const call = /\b(?:spawn|spawnSync|execFile|execFileSync|spawnOwned|runProcess|prometheusProgram)\(\s*["'`]([^"'`]+)["'`]/g;
  const found = new Map<string, string[]>();
  for (const file of files) {
    for (const m of readFileSync(file, "utf8").matchAll(call)) {
      const program = m[1] === "prometheus" ? "promtool" : m[1];
      found.set(program, [...(found.get(program) ?? []), relative(ROOT, file)]);
    }
  }
  return found;
}

const listed = (rows: ReadonlyArray<{ command: string }>) => new Set(rows.map((r) => r.command));

describe("system tools: what a fresh machine needs is installed by the suite itself", () => {
  it("every program a test file starts is Node's, Debian's essentials, or a row of SYSTEM_TOOLS", () => {
    // test/bench and test/conformance are not run by npm test (npm run bench, npm run conformance).
    const files = sourceFiles(join(ROOT, "test")).filter((f) => !/[/\\]test[/\\](bench|conformance)[/\\]/.test(f));
    const programs = spawnedPrograms(files);
    assert.ok(programs.has("skopeo") && programs.has("redis-server"), "the scan finds the known ones");
    const tools = listed(SYSTEM_TOOLS);
    const missing = [...programs].filter(([p]) => !tools.has(p) && !ALWAYS_THERE.has(p)).map(([p, where]) => `${p} (${where.join(", ")})`);
    assert.deepEqual(missing, [], "add a row to SYSTEM_TOOLS in build/system-tools.mjs");
  });

  it("the programs npm run conformance builds the proxy-wasm host with are rows of CONFORMANCE_TOOLS", () => {
    const programs = spawnedPrograms([join(ROOT, "build", "pwhost.mjs"), join(ROOT, "build", "conformance.mjs")]);
    const tools = listed(CONFORMANCE_TOOLS);
    const missing = [...programs.keys()].filter((p) => !tools.has(p) && !ALWAYS_THERE.has(p));
    assert.deepEqual(missing, []);
    // test/pwhost/build-driver.sh compiles and patches the driver.
    const script = readFileSync(join(ROOT, "test", "pwhost", "build-driver.sh"), "utf8");
    for (const program of ["g++", "patch"]) {
      assert.ok(script.includes(program));
      assert.ok(tools.has(program), `${program} is a row of CONFORMANCE_TOOLS`);
    }
  });
});
