import type { IncomingMessage, ServerResponse } from "node:http";
import { Session } from "node:inspector/promises";

/**
 * The profiling endpoints of a daemon's monitoring port (hubs `--profile`,
 * mesh_ca `--enable-profiling`), at the paths upstream's Go daemons serve
 * them (`/debug/pprof/…`). The profiles are V8's, taken with node:inspector,
 * not Go's pprof protobuf: open them in Chrome DevTools or VS Code, not
 * `go tool pprof` (docs/metrics.md "Profiling").
 *
 * - `/debug/pprof/`: the index (text);
 * - `/debug/pprof/profile?seconds=N`: a CPU profile of the next N seconds
 *   (default 30, as Go's), V8 `.cpuprofile` JSON;
 * - `/debug/pprof/heap`: a heap snapshot, V8 `.heapsnapshot` JSON, streamed;
 * - `/debug/pprof/cmdline`: the command line, NUL-separated (as Go's).
 */
export const PPROF_PREFIX = "/debug/pprof/";
export const DEFAULT_CPU_PROFILE_SECONDS = 30;
/** Longer asks are refused: a profile holds a connection and the profiler for its whole length. */
export const MAX_CPU_PROFILE_SECONDS = 3600;

const INDEX = `profiles (V8 formats, from node:inspector; not Go's pprof protobuf):
  /debug/pprof/profile?seconds=N   CPU profile of the next N seconds (default ${DEFAULT_CPU_PROFILE_SECONDS}): .cpuprofile JSON (Chrome DevTools, VS Code)
  /debug/pprof/heap                heap snapshot: .heapsnapshot JSON (Chrome DevTools Memory tab)
  /debug/pprof/cmdline             the command line, NUL-separated
`;

/** One profile at a time per process, as Go's CPU profiler (a second ask gets 409 Conflict). */
let profiling = false;

/**
 * Serves `req` when its path is under /debug/pprof/; returns false for any
 * other path (the caller answers it).
 */
export function serveProfiling(req: IncomingMessage, res: ServerResponse): boolean {
  const url = new URL(req.url ?? "/", "http://monitoring");
  if (url.pathname !== PPROF_PREFIX.slice(0, -1) && !url.pathname.startsWith(PPROF_PREFIX)) return false;
  const name = url.pathname.slice(PPROF_PREFIX.length);
  const text = (status: number, body: string) => res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(body);
  if (name === "") text(200, INDEX);
  else if (name === "cmdline") text(200, [process.execPath, ...process.argv.slice(1)].join("\0"));
  else if (name === "profile" || name === "heap") {
    const seconds = url.searchParams.get("seconds");
    const n = seconds === null ? DEFAULT_CPU_PROFILE_SECONDS : Number(seconds);
    if (name === "profile" && (!Number.isInteger(n) || n <= 0 || n > MAX_CPU_PROFILE_SECONDS)) {
      text(400, `seconds: expected a whole number of seconds from 1 to ${MAX_CPU_PROFILE_SECONDS}, got ${JSON.stringify(seconds)}\n`);
    } else if (profiling) {
      text(409, "a profile is already being taken: try again when it is done\n");
    } else {
      profiling = true;
      const done = () => (profiling = false);
      (name === "profile" ? cpuProfile(n, res) : heapSnapshot(res)).then(done, (e: Error) => {
        done();
        if (!res.headersSent) text(500, `profiling failed: ${e.message}\n`);
        else res.destroy(e);
      });
    }
  } else text(404, `unknown profile ${JSON.stringify(name)}\n${INDEX}`);
  return true;
}

function attachment(res: ServerResponse, filename: string): void {
  res.writeHead(200, { "content-type": "application/json", "content-disposition": `attachment; filename="${filename}"` });
}

/** CPU profile of the next `seconds` seconds; the client leaving stops it early (nothing is sent). */
async function cpuProfile(seconds: number, res: ServerResponse): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      res.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const { profile } = await session.post("Profiler.stop");
    if (res.destroyed) return;
    attachment(res, `cpu-${process.pid}-${Date.now()}.cpuprofile`);
    res.end(JSON.stringify(profile));
  } finally {
    session.disconnect();
  }
}

/** A heap snapshot, written as V8 hands it over in chunks (it can be tens of megabytes). */
async function heapSnapshot(res: ServerResponse): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    attachment(res, `heap-${process.pid}-${Date.now()}.heapsnapshot`);
    session.on("HeapProfiler.addHeapSnapshotChunk", (m) => {
      if (!res.destroyed) res.write(m.params.chunk);
    });
    await session.post("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    res.end();
  } finally {
    session.disconnect();
  }
}
