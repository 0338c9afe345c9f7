// as-pect runs the AssemblyScript unit specs under test/assembly.
// The pure hot path never calls the proxy; the only import a spec can reach
// is proxy_log, through the abort handler, which as-pect's own abort replaces.
//
// All the specs are compiled as one module: as-pect compiles each entry with
// asc on its own, and each compilation spends most of its time on the same
// standard library and as-pect's own runtime, so 43 entries cost about 50 s
// of CPU against 29 s for one (docs/benchmarks.md "npm test"). The entry
// written below imports every spec file (AssemblyScript runs each imported
// file's top level, where the describe blocks are, in import order); groups
// and tests keep their names, and a failure names its group. Naming spec
// files on the command line (`npx asp --config as-pect.config.js
// test/assembly/regex.spec.ts`) compiles just those, each on its own.
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const SPECS = join(root, "test", "assembly");
const GROUPED = join(root, "build", "out", "as-pect", "all.spec.ts");

/** Writes the one entry that imports every spec file; returns its path relative to the root. */
function groupedEntry() {
  const specs = readdirSync(SPECS).filter((f) => f.endsWith(".spec.ts")).sort();
  mkdirSync(dirname(GROUPED), { recursive: true });
  const lines = specs.map((f) => `import ${JSON.stringify(relative(dirname(GROUPED), join(SPECS, f)))};`);
  writeFileSync(GROUPED, `// Written by as-pect.config.js: every spec of test/assembly, compiled as one module.\n${lines.join("\n")}\n`);
  return relative(root, GROUPED);
}

const named = process.argv.slice(2).some((a) => a.endsWith(".spec.ts"));

export default {
  entries: named ? [] : [groupedEntry()],
  include: ["test/assembly/**/*.include.ts"],
  disclude: [/node_modules/],
  async instantiate(memory, createImports, instantiate, binary) {
    const logs = [];
    const env = {
      memory,
      proxy_log(level, ptr, len) {
        logs.push([level, ptr, len]);
        return 0;
      },
    };
    return instantiate(binary, createImports({ env }));
  },
  outputBinary: false,
};
