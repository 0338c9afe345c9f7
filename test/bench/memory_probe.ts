import type { ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Node options that preload the probe (test/bench/memory_probe.mjs) into a daemon: put before its script. */
export const MEMORY_PROBE_ARGS = ["--expose-gc", "--import", pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), "memory_probe.mjs")).href];

/** process.memoryUsage() of the daemon after full garbage collections (bytes), and the heap snapshot when asked for. */
export interface ProbedMemory {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  /** Memory outside V8's heap held by JS objects (Buffers' and ArrayBuffers' data among it). */
  readonly external: number;
  readonly arrayBuffers: number;
  readonly snapshot?: string;
}

/** What the daemon holds live: its heap in use plus the external memory its objects hold. */
export const liveBytes = (m: ProbedMemory) => m.heapUsed + m.external;

/** Reads a daemon started with MEMORY_PROBE_ARGS (its stderr piped): each call collects its garbage and answers. */
export class MemoryProbe {
  private static readonly probes = new WeakMap<ChildProcess, MemoryProbe>();
  /** The probe of a daemon (one per process: each reads its answers). */
  static of(proc: ChildProcess): MemoryProbe {
    let probe = MemoryProbe.probes.get(proc);
    if (!probe) MemoryProbe.probes.set(proc, (probe = new MemoryProbe(proc)));
    return probe;
  }

  private asked = 0;
  private readonly answers = new Map<number, ProbedMemory>();
  private pending = "";

  private constructor(private readonly proc: ChildProcess) {
    proc.stderr!.on("data", (c: Buffer) => {
      this.pending += c;
      const lines = this.pending.split("\n");
      this.pending = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith("memory-probe ")) continue;
        const answer = JSON.parse(line.slice("memory-probe ".length)) as ProbedMemory & { n: number };
        this.answers.set(answer.n, answer);
      }
    });
  }

  async read(limitMs = 600_000): Promise<ProbedMemory> {
    const n = ++this.asked;
    this.proc.kill("SIGUSR2");
    for (const deadline = Date.now() + limitMs; !this.answers.has(n); await new Promise((r) => setTimeout(r, 50)))
      if (Date.now() > deadline) throw new Error("the daemon did not answer the memory probe");
    return this.answers.get(n)!;
  }
}
