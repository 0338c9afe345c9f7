// `npm test`: builds everything and runs every test.
//   1. `npm run build` (the node tests run the built programs and module);
//   2. if it passed, side by side: `npm run test:node`, `npm run typecheck`,
//      `npm run test:assembly`, `npm run check:imports` (no import cycle or
//      upward import; build/check-imports.mjs) and `npm run lint` (Biome;
//      build/lint.mjs); none needs another's output. tsc and as-pect
//      are single-threaded and the node tests spend much of their time waiting
//      on the processes they start, so the two fill the node tests' idle time
//      instead of running before them.
// The node tests print as they go; the output of typecheck and test:assembly is
// printed whole after the node tests end, so nothing interleaves with their
// report. The exit status is that of the first step (in that order) that failed.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const children = new Set();
const start = Date.now();

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(1);
  });
}

/** Runs `npm run <script>`; resolves with its exit status, when it ended (seconds into `npm test`) and, when buffered, its output. */
function run(script, buffered) {
  return new Promise((resolve) => {
    const child = spawn(npm, ["run", script], { cwd: root, stdio: buffered ? ["ignore", "pipe", "pipe"] : "inherit" });
    children.add(child);
    const output = [];
    if (buffered) {
      child.stdout.on("data", (chunk) => output.push([process.stdout, chunk]));
      child.stderr.on("data", (chunk) => output.push([process.stderr, chunk]));
    }
    child.on("error", (error) => output.push([process.stderr, Buffer.from(`${npm} run ${script}: ${error.message}\n`)]));
    child.on("close", (code, signal) => {
      children.delete(child);
      resolve({ script, status: code ?? (signal ? 1 : 0), ended: Math.round((Date.now() - start) / 1000), output });
    });
  });
}

const status = (result) => `npm test: ${result.script} ${result.status === 0 ? "passed" : `failed (exit ${result.status})`} after ${result.ended} s\n`;
/** Prints a buffered step's output whole, ending on a new line. */
function print(result) {
  for (const [stream, chunk] of result.output) stream.write(chunk);
  const last = result.output.at(-1);
  if (last && !last[1].toString().endsWith("\n")) last[0].write("\n");
}

const build = await run("build", false);
process.stdout.write(status(build));
if (build.status !== 0) process.exit(build.status);

const beside = ["typecheck", "test:assembly", "check:imports", "lint"];
process.stdout.write(`npm test: test:node, with ${beside.join(" and ")} side by side (their output follows the node tests)\n`);
const besideResults = beside.map((script) => run(script, true));
const node = await run("test:node", false);
const results = [node, ...(await Promise.all(besideResults))];
process.stdout.write(status(node));
for (const result of results.slice(1)) {
  print(result);
  process.stdout.write(status(result));
}
process.exit(results.find((r) => r.status !== 0)?.status ?? 0);
