// A reporter for Node's test runner (build/run-node-tests.mjs adds it): at the
// end of the run, the test files that took longest and those that cost most
// CPU, so whoever keeps `npm test` short knows where its time goes.
//
// A file's time is the sum of its top-level tests and suites (they run one
// after the other inside the file); the file's own start (loading its imports)
// is not counted. Files run several at a time (build/run-node-tests.mjs), so
// the sum over files is several times the run's wall time.
//
// A file's CPU is what its process and the children it waited for (programs
// it ran, daemons it stopped) used, as the file wrote it to MESH_TEST_CPU_LOG
// (test/support/processes.ts); all of them are kept in build/out/test-cpu.json.
// On a shared 2-core machine the run's CPU, more than its wall time, decides
// how long it takes.
//
// The seconds per file are written to build/out/test-durations.json
// (merged into what an earlier run recorded there): `npm run test:durations`
// copies them into build/test-durations.json, the order build/run-node-tests.mjs
// starts files in.
import { existsSync, mkdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { dirname, relative } from "node:path";
import { sourcePath } from "./bundle-tests.mjs";

const SHOWN = 15;

export default async function* durations(source) {
  const byFile = new Map();
  // The runner may end the process as soon as the last file ends
  // (--test-force-exit), before a reporter's stream is read to its end: the
  // table is written when the process exits.
  process.once("exit", () => {
    writeSync(process.stdout.fd, table(byFile));
    record(byFile);
    writeSync(process.stdout.fd, cpuTable());
  });
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || !file || typeof details?.duration_ms !== "number") continue;
    const name = sourcePath(relative(process.cwd(), file));
    const entry = byFile.get(name) ?? { ms: 0, tests: 0 };
    entry.ms += details.duration_ms;
    entry.tests += 1;
    byFile.set(name, entry);
  }
}

function table(byFile) {
  const files = [...byFile].sort((a, b) => b[1].ms - a[1].ms);
  const total = files.reduce((sum, [, e]) => sum + e.ms, 0);
  const lines = files.slice(0, SHOWN).map(([name, e]) => `${(e.ms / 1000).toFixed(1).padStart(8)} s  ${name}`);
  return `\nslowest test files (of ${files.length}, ${(total / 1000).toFixed(0)} s in all; several run at a time):\n${lines.join("\n")}\n`;
}

/** The files that cost most CPU (and the total), from MESH_TEST_CPU_LOG; written whole to build/out/test-cpu.json. */
function cpuTable() {
  const log = process.env.MESH_TEST_CPU_LOG;
  if (!log || !existsSync(log)) return "";
  const byFile = new Map();
  for (const line of readFileSync(log, "utf8").split("\n")) {
    if (!line) continue;
    const { file, own, children } = JSON.parse(line);
    byFile.set(sourcePath(relative(process.cwd(), file)), { own, children, total: own + children });
  }
  const files = [...byFile].sort((a, b) => b[1].total - a[1].total);
  const sum = (key) => files.reduce((s, [, e]) => s + e[key], 0);
  try {
    writeFileSync(
      "build/out/test-cpu.json",
      `${JSON.stringify(Object.fromEntries(files.map(([n, e]) => [n, { own: round(e.own), children: round(e.children) }])), null, 1)}\n`,
    );
  } catch {
    // A report only.
  }
  const lines = files.slice(0, SHOWN).map(([name, e]) => `${e.total.toFixed(1).padStart(8)} s  ${name} (${e.children.toFixed(1)} s in the programs it ran)`);
  return `\nmost CPU (of ${files.length} files, ${sum("total").toFixed(0)} s in all, ${sum("children").toFixed(0)} s of it in the programs they ran):\n${lines.join("\n")}\n`;
}

const round = (n) => Math.round(n * 10) / 10;

/** Merges this run's seconds per file into build/out/test-durations.json. */
function record(byFile) {
  const out = "build/out/test-durations.json";
  try {
    const seconds = existsSync(out) ? JSON.parse(readFileSync(out, "utf8")) : {};
    for (const [name, e] of byFile) seconds[name] = Math.round(e.ms / 100) / 10;
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(Object.fromEntries(Object.entries(seconds).sort()), null, 1)}\n`);
  } catch (error) {
    writeSync(process.stderr.fd, `test-durations: could not write ${out}: ${error.message}\n`);
  }
}
