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
/** Programs of Debian's Essential packages (dash, coreutils, bash, util-linux) and npm, which comes with Node. */
const ALWAYS_THERE = new Set(["sh", "sleep", "bash", "setpriv", "flock", "npm"]);
/** The package's own programs (package.json "bin"), built by npm test before any test runs. */
const OWN_PROGRAMS = new Set(Object.keys(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).bin as Record<string, string>));
/** Programs that come in the package of a SYSTEM_TOOLS row's command. */
const SAME_PACKAGE: Readonly<Record<string, string>> = { "iptables-restore": "iptables", "iptables-save": "iptables", prometheus: "promtool" };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/**
 * Program names started by the code: literals given to spawn/exec calls and
 * to the tests' wrappers over them (`sh`, `quietly`, `run`), to
 * prometheusProgram (promtool's package), and the program after `ip netns
 * exec NS` or a privilege drop (`setpriv … --`).
 */
function spawnedPrograms(files: readonly string[]): Map<string, string[]> {
  const patterns = [
    /\b(?:spawn|spawnSync|execFile|execFileSync|spawnOwned|runProcess|prometheusProgram|sh|quietly|run)\(\s*["'`]([a-z][\w.+-]*)["'`]/g,
    /"netns",\s*"exec",\s*[\w.]+,\s*"([a-z][\w.+-]*)"/g,
    /\[\s*"(setpriv|nsenter|unshare|runuser|sudo|su|capsh)"/g,
  ];
  const found = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) {
        const program = SAME_PACKAGE[m[1]] ?? m[1];
        if (OWN_PROGRAMS.has(program)) continue;
        found.set(program, [...new Set([...(found.get(program) ?? []), relative(ROOT, file)])]);
      }
    }
  }
  return found;
}

const listed = (rows: ReadonlyArray<{ command: string }>) => new Set(rows.map((r) => r.command));

describe("system tools: what a fresh machine needs is installed by the suite itself", () => {
  it("every program the tests start is Node's, Debian's essentials, the package's own, or a row of SYSTEM_TOOLS", () => {
    // test/bench and test/conformance are not run by npm test (npm run bench, npm run conformance).
    // The product's own spawns count too (meshctl and the agent run iptables-restore in the tests).
    const files = [...sourceFiles(join(ROOT, "test")), ...sourceFiles(join(ROOT, "host"))].filter((f) => !/[/\\]test[/\\](bench|conformance)[/\\]/.test(f));
    const programs = spawnedPrograms(files);
    for (const known of ["skopeo", "redis-server", "promtool", "ip", "iptables"]) assert.ok(programs.has(known), `the scan finds ${known}`);
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
