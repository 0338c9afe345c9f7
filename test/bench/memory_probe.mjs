// Preloaded into a daemon a bench measures (`node --expose-gc --import
// <this file> <daemon> …`): on SIGUSR2 it runs full garbage collections and
// prints `memory-probe {"n":…,"rss":…,"heapUsed":…,"external":…,…}` (bytes,
// process.memoryUsage()) on stderr, so the bench reads what the daemon holds
// live, not garbage it has not collected yet. With MEMORY_PROBE_SNAPSHOTS=<dir>
// it also writes a heap snapshot there (named in the line as `snapshot`).
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";

let n = 0;
const collect = () => {
  // Twice: objects freed by the first collection's finalizers (ArrayBuffers of Buffers) go in the second.
  globalThis.gc();
  globalThis.gc();
};
process.on("SIGUSR2", () => {
  n++;
  collect();
  // Concurrent sweeping frees external memory a little later: one more turn.
  setTimeout(() => {
    collect();
    const usage = process.memoryUsage(); // before a snapshot, which takes memory of its own
    const dir = process.env.MEMORY_PROBE_SNAPSHOTS;
    const snapshot = dir ? writeHeapSnapshot(join(dir, `probe-${n}.heapsnapshot`)) : undefined;
    process.stderr.write(`memory-probe ${JSON.stringify({ n, ...usage, ...(snapshot ? { snapshot } : {}) })}\n`);
  }, 200);
});
