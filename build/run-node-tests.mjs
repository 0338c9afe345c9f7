// Runs every test/**/*.test.ts with Node's test runner, from bundles of the
// files made by esbuild (build/bundle-tests.mjs: one plain ES module each
// instead of tsx compiling and loading hundreds of modules in every file).
// (Node 20's --test does not expand globs or pick up .ts files by itself.)
//   node build/run-node-tests.mjs [path-substring…]
//
// Every test file preloads test/support/processes.ts, which kills the process
// groups the file started and removes its temporary folders when the file
// ends, whatever its outcome; a file whose tests are done exits even if a
// server it opened is still listening (--test-force-exit), instead of hanging. As a last resort, once the run is over (or
// interrupted), any process still carrying this run's marker in its
// environment is named and killed: a run leaves nothing behind.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { TESTS_OUT, bundleTests } from "./bundle-tests.mjs";
import { ensureSystemTools } from "./system-tools.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const only = process.argv.slice(2);
/** No test, suite or file may run longer: a hang is cancelled, never waited on forever (a file of CLI runs took over 10 min at load average 34). */
const TEST_TIMEOUT_MS = 30 * 60_000;
const MARKER = "MESH_TEST_RUN";
/**
 * Test files run at a time (MESH_TEST_CONCURRENCY overrides). Files mostly wait
 * on the processes they start, and on a busy machine the scheduler shares the
 * cores by process: test/e2e took 688 s four at a time, 896 s two at a time
 * (load average 22-30, 2 cores).
 */
const CONCURRENCY = Number(process.env.MESH_TEST_CONCURRENCY) || 4;

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith(".test.ts")) out.push(relative(root, path));
  }
  return out;
}

/** Pids of processes whose environment holds `MESH_TEST_RUN=<run>` (Linux /proc; elsewhere none are found). */
function processesOfRun(run) {
  const found = [];
  let entries = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return found;
  }
  const needle = `${MARKER}=${run}\0`;
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (`${readFileSync(`/proc/${pid}/environ`, "latin1")}\0`.includes(needle)) {
        found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim() });
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

function killLeftovers(run) {
  const left = processesOfRun(run);
  for (const { pid, command } of left) {
    process.stderr.write(`run-node-tests: killing a process the tests left running: ${pid} ${command}\n`);
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  return left.length;
}

/**
 * Seconds each file took in a recorded run (build/test-durations.json; a full
 * run writes fresh figures to build/out/test-durations.json, copy them over to
 * refresh it). Files start longest first, so the long ones do not start last
 * and run on alone at the end: a file not recorded yet counts as longest.
 */
function recordedSeconds() {
  try {
    return JSON.parse(readFileSync(join(root, "build", "test-durations.json"), "utf8"));
  } catch {
    return {};
  }
}

const seconds = recordedSeconds();
const files = find(join(root, "test"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()
  .sort((a, b) => (seconds[b] ?? Infinity) - (seconds[a] ?? Infinity));
if (files.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
// Every system tool a test runs (skopeo, promtool, redis-server, iptables, ip) is installed now, once, when missing.
try {
  process.env.PATH = ensureSystemTools((line) => process.stdout.write(`# ${line}\n`));
} catch (error) {
  console.error(`run-node-tests: ${error.message}`);
  process.exit(1);
}
const run = randomUUID();
// Node's own choice of reporter (spec on a terminal, else TAP), then the slowest files (build/test-durations.mjs).
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? "spec" : "tap"}`,
  "--test-reporter-destination=stdout",
  "--test-reporter=./build/test-durations.mjs",
  "--test-reporter-destination=stdout",
];
const bundled = join(root, TESTS_OUT, run);
const removeBundles = () => rmSync(bundled, { recursive: true, force: true });
let preload;
let bundles;
try {
  [preload, ...bundles] = await bundleTests(root, ["test/support/processes.ts", ...files], run);
} catch (error) {
  removeBundles();
  console.error(`run-node-tests: bundling the test files failed: ${error.message}`);
  process.exit(1);
}
const child = spawn(
  process.execPath,
  [
    "--import",
    `./${preload}`,
    "--test",
    ...reporters,
    `--test-concurrency=${CONCURRENCY}`,
    "--test-force-exit",
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    ...bundles,
  ],
  // Each file appends its CPU seconds to MESH_TEST_CPU_LOG (test/support/processes.ts); the durations reporter lists them.
  { cwd: root, stdio: "inherit", env: { ...process.env, [MARKER]: run, MESH_TEST_CPU_LOG: join(bundled, "cpu.jsonl") } },
);
// Ctrl-C reaches the runner and the test files (one process group); the files stop their processes, then this sweeps.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  killLeftovers(run);
  removeBundles();
  process.exit(code ?? (signal ? 1 : 0));
});
