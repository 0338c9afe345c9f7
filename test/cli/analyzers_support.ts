// Upstream's analyzers_test.go style: each case names input files, one
// analyzer (by its -L name) and the messages it must report, as
// [message name, resource]; the list is compared whole, so a case with no
// expected message is a negative case. Runs the analyzer in-process through
// runAnalyze (the command's own path, filtered to that analyzer).
import assert from "node:assert/strict";
import { join } from "node:path";
import { Writable } from "node:stream";
import { it } from "node:test";
import { filterChecks } from "../../host/config/catalog.ts";
import { runAnalyze } from "../../host/cli/meshctl/analyze/run.ts";
import { ANALYZERS } from "../../host/cli/meshctl/analyze/registry.ts";
import { messageTypeByCode } from "../../host/cli/meshctl/analyze/messages.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { FIXTURES } from "./cli_golden_support.ts";

export interface AnalyzerCase {
  name: string;
  /** Files under test/cli/fixtures/analyze/. */
  inputFiles: string[];
  analyzer: string;
  meshConfigFile?: string;
  /** The wall clock the analysis runs at, epoch milliseconds (default: now). */
  clock?: number;
  /** [message name, `Kind namespace/name`], in any order. */
  expected: Array<[string, string]>;
}

class Sink extends Writable {
  text = "";
  override _write(chunk: Buffer | string, _e: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

let checks: ReturnType<typeof filterChecks> | undefined;

/** The [name, resource] pairs one analyzer reports on the files, sorted. */
export function analyzeWith(analyzer: string, files: readonly string[], meshConfigFile?: string, clock?: number): Array<[string, string]> {
  const chosen = ANALYZERS.filter((a) => a.name === analyzer);
  assert.equal(chosen.length, 1, `no analyzer named ${analyzer}`);
  checks ??= filterChecks(FilterModule.load());
  const stdout = new Sink();
  const stderr = new Sink();
  runAnalyze({
    files: files.map((f) => join(FIXTURES, "analyze", f)),
    allNamespaces: true,
    color: false,
    failureThreshold: "Error",
    outputThreshold: "Info",
    listAnalyzers: false,
    meshConfigFile: meshConfigFile ? join(FIXTURES, "analyze", meshConfigFile) : undefined,
    output: "json",
    recursive: false,
    suppress: [],
    timeoutMs: 60_000,
    useKube: false,
    verbose: false,
    namespace: "default",
    meshNamespace: "mesh-system",
    stdout,
    stderr,
    checks,
    analyzers: chosen,
    ...(clock === undefined ? {} : { clock: () => clock }),
  });
  const messages = stdout.text.trim() ? (JSON.parse(stdout.text) as Array<{ code: string; origin: string }>) : [];
  return messages.map((m): [string, string] => [messageTypeByCode(m.code)?.name ?? m.code, m.origin]).sort();
}

/** One `it` per case. */
export function runCases(cases: readonly AnalyzerCase[]): void {
  for (const c of cases) {
    it(`${c.analyzer}: ${c.name}`, () => {
      assert.deepEqual(analyzeWith(c.analyzer, c.inputFiles, c.meshConfigFile, c.clock), [...c.expected].sort());
    });
  }
}
