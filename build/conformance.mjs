// `npm run conformance`: the filter module's scenarios on a real proxy-wasm host.
//  1. builds the host (proxy-wasm-cpp-host on WAMR + the pwdriver driver) with
//     ../shared/tools/pwhost/build.sh into PWHOST_DIR (default /tmp/pwhost), reusing
//     an earlier build there: only the driver is relinked when its source changed;
//     then the driver with test/pwhost/pwdriver-waits.patch (test/pwhost/build-driver.sh),
//     which lets the proxy's timer fire while a stream waits and while a root drains;
//  2. builds the modules when assembly/ is newer than them (npm test has built them in CI);
//  3. runs test/conformance/*.conformance.ts on it (release and debug modules).
// Environment: PWHOST_DIR, PWHOST_BUILD (path of build.sh, found by walking up from the repo otherwise).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
const say = (text) => console.error(`conformance: ${text} (${((Date.now() - started) / 1000).toFixed(0)} s)`);

/** ../shared/tools/pwhost/build.sh relative to the repository, or to a folder above it (worktrees). */
function findBuildScript() {
  if (process.env.PWHOST_BUILD) return resolve(process.env.PWHOST_BUILD);
  for (let dir = resolve(root, ".."); ; dir = dirname(dir)) {
    const candidate = join(dir, "shared", "tools", "pwhost", "build.sh");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  console.error("conformance: ../shared/tools/pwhost/build.sh not found (set PWHOST_BUILD)");
  process.exit(1);
}

const mtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : 0);
function newest(dir) {
  let t = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    t = Math.max(t, statSync(path).isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return t;
}

// 1. The host, under a lock (several checkouts on one machine may share PWHOST_DIR), deciding
//    inside it: a full build when the libraries are missing or build.sh changed, a relink when
//    only pwdriver.cc changed, nothing otherwise; the same for pwdriver-waits.
const buildScript = findBuildScript();
const outDir = resolve(process.env.PWHOST_DIR ?? "/tmp/pwhost");
const driver = join(outDir, "pwdriver-waits");
const decide = `
  out=$PWHOST_DIR
  if [ -f "$out/libproxy_wasm.a" ] && [ -f "$out/wamr-build/libiwasm.a" ] && [ "$out/libproxy_wasm.a" -nt "$BUILD_SH" ]; then
    if [ -x "$out/pwdriver" ] && [ "$out/pwdriver" -nt "$DRIVER_CC" ] && [ -f "$out/hubmsg.mjs" ]; then echo "reusing the host built in $out" >&2; else
      echo "relinking the driver in $out" >&2; DRIVER_ONLY=1 bash "$BUILD_SH" >/dev/null; fi
  else
    echo "building the host in $out (about 80 s on idle cores)" >&2
    bash "$BUILD_SH" >/dev/null
  fi`;
// build-driver.sh rebuilds pwdriver-waits only when it is older than its sources.
const waits = `bash "$WAITS_BUILD" >/dev/null`;
const env = {
  ...process.env,
  PWHOST_DIR: outDir,
  PWHOST_TOOLS: dirname(buildScript),
  BUILD_SH: buildScript,
  DRIVER_CC: join(dirname(buildScript), "pwdriver.cc"),
  WAITS_BUILD: join(root, "test", "pwhost", "build-driver.sh"),
};
const build = spawnSync("flock", [`${outDir}.lock`, "bash", "-ec", `${decide}\n${waits}`], { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
if (build.status !== 0 || !existsSync(driver)) {
  console.error(`conformance: the host build failed (exit ${build.status})`);
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
