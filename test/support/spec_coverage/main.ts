// `npm run spec-coverage`: regenerates docs/spec-coverage.md from the built
// programs (run after `npm run build`; the npm script builds first).
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stopOwnedProcesses } from "../../../host/demo/processes.ts";
import { generateCoverage } from "./generate.ts";
import { RUNS } from "./run.ts";

export const COVERAGE_PAGE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "docs", "spec-coverage.md");

try {
  const { entries, markdown } = await generateCoverage();
  writeFileSync(COVERAGE_PAGE, markdown);
  const runs = [...RUNS].map(([name, n]) => `${name} ${n}`).join(", ");
  process.stdout.write(`docs/spec-coverage.md: ${entries.length} entries; programs run: ${runs}\n`);
} finally {
  await stopOwnedProcesses();
}
