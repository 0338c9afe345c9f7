import { execFileSync } from "node:child_process";
import { join } from "node:path";

/**
 * Compiles test/bench/fixtures/noop_filter.ts, a proxy-wasm filter that
 * continues every request without reading anything, with the project's
 * compiler into `dir`; returns the module's path. It runs in the fixture's
 * folder: in the repository root asc would read asconfig.json and compile the
 * filter's entry in as well.
 */
export function buildNoopModule(dir: string): string {
  const out = join(dir, "noop.wasm");
  const fixtures = join(import.meta.dirname, "fixtures");
  const asc = join(import.meta.dirname, "..", "..", "node_modules", "assemblyscript", "bin", "asc.js");
  execFileSync(
    process.execPath,
    [asc, "noop_filter.ts", "-o", out, "--exportStart", "_initialize", "--exportRuntime", "--runtime", "minimal", "--use", "abort=", "-O3"],
    { cwd: fixtures, stdio: "pipe" },
  );
  return out;
}
