// The real proxy-wasm host (proxy-wasm-cpp-host on WAMR, ../shared/tools/pwhost)
// with the project's driver patch, built once into PWHOST_DIR (default
// /tmp/pwhost) and reused: used by `npm run conformance` and by the pwhost bench.
//   - a full build when the libraries are missing or build.sh changed, a relink
//     when only pwdriver.cc changed, nothing otherwise; then pwdriver-waits
//     (test/pwhost/build-driver.sh: the driver with test/pwhost/pwdriver-waits.patch,
//     which lets the proxy's timer fire while a stream waits and while a root drains);
//   - under a lock: several checkouts on one machine may share PWHOST_DIR.
// Environment: PWHOST_DIR, PWHOST_BUILD (path of build.sh, found by walking up from the repo otherwise).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** ../shared/tools/pwhost/build.sh relative to the repository, or to a folder above it (worktrees). */
function findBuildScript(root) {
  if (process.env.PWHOST_BUILD) return resolve(process.env.PWHOST_BUILD);
  for (let dir = resolve(root, ".."); ; dir = dirname(dir)) {
    const candidate = join(dir, "shared", "tools", "pwhost", "build.sh");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new Error("../shared/tools/pwhost/build.sh not found (set PWHOST_BUILD)");
}

const decide = `
  out=$PWHOST_DIR
  if [ -f "$out/libproxy_wasm.a" ] && [ -f "$out/wamr-build/libiwasm.a" ] && [ "$out/libproxy_wasm.a" -nt "$BUILD_SH" ]; then
    if [ -x "$out/pwdriver" ] && [ "$out/pwdriver" -nt "$DRIVER_CC" ] && [ -f "$out/hubmsg.mjs" ]; then echo "reusing the host built in $out" >&2; else
      echo "relinking the driver in $out" >&2; DRIVER_ONLY=1 bash "$BUILD_SH" >/dev/null; fi
  else
    echo "building the host in $out (about 80 s on idle cores)" >&2
    bash "$BUILD_SH" >/dev/null
  fi
  bash "$WAITS_BUILD" >/dev/null`;

/** Builds (or reuses) the driver and returns its path; throws when the build fails. */
export function ensurePwdriver(root) {
  const buildScript = findBuildScript(root);
  const outDir = resolve(process.env.PWHOST_DIR ?? "/tmp/pwhost");
  const driver = join(outDir, "pwdriver-waits");
  const env = {
    ...process.env,
    PWHOST_DIR: outDir,
    PWHOST_TOOLS: dirname(buildScript),
    BUILD_SH: buildScript,
    DRIVER_CC: join(dirname(buildScript), "pwdriver.cc"),
    WAITS_BUILD: join(root, "test", "pwhost", "build-driver.sh"),
  };
  const build = spawnSync("flock", [`${outDir}.lock`, "bash", "-ec", decide], { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
  if (build.status !== 0 || !existsSync(driver)) throw new Error(`the proxy-wasm host build failed (exit ${build.status})`);
  return driver;
}
