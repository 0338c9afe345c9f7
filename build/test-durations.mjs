// A reporter for Node's test runner (build/run-node-tests.mjs adds it): at the
// end of the run, the test files that took longest, so whoever keeps
// `npm test` short knows where its time goes.
//
// A file's time is the sum of its top-level tests and suites (they run one
// after the other inside the file); the file's own start (loading its imports)
// is not counted. Files run several at a time (build/run-node-tests.mjs), so
// the sum over files is several times the run's wall time.
//
// The same figures, file by file, are written to build/out/test-durations.json
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
