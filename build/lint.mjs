// `npm run lint` (part of `npm test`): Biome's lint rules and its formatting
// on the whole tree (biome.jsonc says which files and rules). `npm run format`
// writes the formatting. The tree was formatted as a whole in one commit
// (51cb7fc) once no branch was open; from then on every file is checked.
//
//   node build/lint.mjs [--write]
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const biome = join(root, "node_modules", ".bin", process.platform === "win32" ? "biome.cmd" : "biome");
const write = process.argv.includes("--write");

function biomeRun(args) {
  const result = spawnSync(biome, args, { cwd: root, stdio: "inherit" });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

let status = write ? 0 : biomeRun(["lint"]);
const formatted = biomeRun(["format", ...(write ? ["--write"] : [])]);
if (formatted !== 0) {
  process.stderr.write("lint: files are not formatted: `npm run format` formats them\n");
  status ||= formatted;
}
process.exit(status);
