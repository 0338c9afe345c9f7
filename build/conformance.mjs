// `npm run conformance`: the filter module's scenarios on a real proxy-wasm host.
//  1. builds the host (proxy-wasm-cpp-host on WAMR + the pwdriver driver) into
//     PWHOST_DIR, or reuses it (build/pwhost.mjs);
//  2. builds the modules when assembly/ is newer than them (npm test has built them in CI);
//  3. runs test/conformance/*.conformance.ts on it (release and debug modules).
// Environment: PWHOST_DIR, PWHOST_BUILD (path of build.sh, found by walking up from the repo otherwise).
import { execFileSync, spawnSync } from "node:child_process";
import { ensurePwdriver } from "./pwhost.mjs";
import { CONFORMANCE_TOOLS, ensureSystemTools } from "./system-tools.mjs";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
const say = (text) => console.error(`conformance: ${text} (${((Date.now() - started) / 1000).toFixed(0)} s)`);

const mtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : 0);
function newest(dir) {
  let t = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    t = Math.max(t, statSync(path).isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return t;
}

// 1. The host (build/pwhost.mjs).
let driver;
try {
  process.env.PATH = ensureSystemTools((line) => say(line), CONFORMANCE_TOOLS);
  driver = ensurePwdriver(root);
} catch (error) {
  console.error(`conformance: ${error.message}`);
  process.exit(1);
}
say("host ready");

// 2. The modules.
const modules = ["filter.wasm", "filter.debug.wasm"].map((f) => join(root, "build", f));
if (modules.some((m) => mtime(m) < newest(join(root, "assembly"))) || !existsSync(join(root, "build", "deploy", "plugin-config.json"))) {
  say("building the modules and deploy artifacts");
  execFileSync(process.execPath, [join(root, "build", "build.mjs")], { cwd: root, stdio: "inherit" });
}

// 3. The scenarios.
const scenarios = readdirSync(join(root, "test", "conformance"))
  .filter((f) => f.endsWith(".conformance.ts"))
  .map((f) => join("test", "conformance", f));
const run = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...scenarios], {
  cwd: root,
  env: { ...process.env, PWDRIVER: driver },
  stdio: "inherit",
});
say(`scenarios finished with exit ${run.status}`);
process.exit(run.status ?? 1);
