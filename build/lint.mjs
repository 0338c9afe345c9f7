// `npm run lint` (part of `npm test`): Biome's lint rules on the whole tree
// (biome.jsonc says which files and rules), and Biome's formatting on the
// files changed since FORMAT_BASE only. `npm run format` writes that
// formatting into those files.
//
// Why only changed files: formatting the whole tree rewrites most files, and
// while other branches are open every one of their merges would conflict.
// Once no branch is open, the whole tree is formatted in one commit
// (`npx biome format --write`), FORMAT_BASE becomes that commit, and from
// then on every file is checked (docs/development.md "Lint and format").
//
//   node build/lint.mjs [--write]
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Files changed since this commit (the branch that brought Biome in, merged with main) are formatted. */
const FORMAT_BASE = "2f65828670e0663af4367c464a11ea81855084e2";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const biome = join(root, "node_modules", ".bin", process.platform === "win32" ? "biome.cmd" : "biome");
const write = process.argv.includes("--write");

function run(command, args) {
  return spawnSync(command, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function biomeRun(args) {
  const result = spawnSync(biome, args, { cwd: root, stdio: "inherit" });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/** Source files changed since FORMAT_BASE (committed or not, and new ones); undefined when git or the commit is missing. */
function changedFiles() {
  const known = run("git", ["cat-file", "-e", `${FORMAT_BASE}^{commit}`]);
  if (known.error || known.status !== 0) return undefined;
  const changed = run("git", ["diff", "--name-only", "--diff-filter=ACMR", FORMAT_BASE, "--"]);
  const added = run("git", ["ls-files", "--others", "--exclude-standard"]);
  const files = new Set([...changed.stdout.split("\n"), ...added.stdout.split("\n")]);
  return [...files].filter((f) => /\.(ts|mjs)$/.test(f) && /^(host|test|build)\//.test(f)).sort();
}

let status = write ? 0 : biomeRun(["lint"]);
const files = changedFiles();
if (files === undefined) {
  process.stdout.write(`lint: formatting not checked: commit ${FORMAT_BASE} is not in this clone's history\n`);
} else if (files.length > 0) {
  // Files biome.jsonc leaves out (AssemblyScript, fixtures) are skipped.
  const formatted = biomeRun(["format", ...(write ? ["--write"] : []), "--no-errors-on-unmatched", ...files]);
  if (formatted !== 0) {
    process.stderr.write("lint: files changed since the format base are not formatted: `npm run format` formats them\n");
    status ||= formatted;
  }
}
process.exit(status);
