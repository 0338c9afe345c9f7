// `npm test`: builds everything and runs every test.
//   1. side by side: `npm run build`, `npm run typecheck`, `npm run test:assembly`
//      (none needs another's output; each is mostly one single-threaded process);
//   2. then, if all three passed, `npm run test:node` (it runs the built programs).
// The output of a step of 1 is printed whole when it ends, so the three never
// interleave; the exit status is that of the first step that failed.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const children = new Set();

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(1);
  });
}

/** Runs `npm run <script>`; resolves with its exit status and, when buffered, its output. */
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
      resolve({ script, status: code ?? (signal ? 1 : 0), output });
    });
  });
}

const first = ["build", "typecheck", "test:assembly"];
process.stdout.write(`npm test: ${first.join(", ")} side by side (each one's output follows when it ends)\n`);
const start = Date.now();
const results = await Promise.all(
  first.map(async (script) => {
    const result = await run(script, true);
    for (const [stream, chunk] of result.output) stream.write(chunk);
    const last = result.output.at(-1)?.[1];
    if (last && !last.toString().endsWith("\n")) result.output.at(-1)[0].write("\n");
    process.stdout.write(`npm test: ${script} ${result.status === 0 ? "passed" : `failed (exit ${result.status})`} after ${Math.round((Date.now() - start) / 1000)} s\n`);
    return result;
  }),
);
const failed = results.find((r) => r.status !== 0);
if (failed) process.exit(failed.status);
const node = await run("test:node", false);
process.exit(node.status);
