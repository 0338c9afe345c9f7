// Runs every test/**/*.test.ts with Node's test runner, TypeScript loaded by tsx.
// (Node 20's --test does not expand globs or pick up .ts files by itself.)
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const only = process.argv.slice(2);

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith(".test.ts")) out.push(relative(root, path));
  }
  return out;
}

const files = find(join(root, "test"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
if (files.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
const run = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...files], {
  cwd: root,
  stdio: "inherit",
});
process.exit(run.status ?? 1);
