// disco-discovery's memory per connected client, each mode in a fresh
// daemon (the built one, build/out) so that no round reuses heap another
// freed: one warm client (the views every client shares exist before the
// first reading), then N more Envoy-like clients (test/bench/discovery.ts's,
// state of the world or incremental), every one configured. Printed per
// client: what the daemon holds live after full garbage collections (V8 heap
// in use plus external memory: test/bench/memory_probe.mjs), and its
// resident growth before and after those collections (and at its peak,
// sampled while the clients connect), and how long until every client was
// configured. SNAPSHOTS=1 (for a
// few hundred clients: a snapshot of thousands is too large to parse) adds
// the heap growth per client by V8 node name. Not part of `npm run bench`:
//   MODE=delta N=5000 node --import tsx test/bench/discovery_heap.ts
//   (MODE=sotw, or both: each in its own daemon, one after the other)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { folderForHeap, lightClientForHeap } from "./discovery.ts";
import { MEMORY_PROBE_ARGS, MemoryProbe, liveBytes } from "./memory_probe.ts";
import { rssMiB } from "./process_usage.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const count = Number(process.env.N ?? 5000);
const modes = process.env.MODE === "both" ? [false, true] : [process.env.MODE === "delta"];
const snapshots = process.env.SNAPSHOTS === "1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(ok: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 900_000; !ok(); await sleep(50)) if (Date.now() > deadline) throw new Error("timed out");
}
const kib = (bytes: number) => `${(bytes / count / 1024).toFixed(1)} KiB`;

/** Bytes and objects by node name (objects by constructor, the rest by V8's node type). */
function heapByName(path: string): { total: number; byName: Map<string, [number, number]> } {
  const s = JSON.parse(readFileSync(path, "utf8"));
  const fields = s.snapshot.meta.node_fields as string[];
  const types = s.snapshot.meta.node_types[0] as string[];
  const [ti, ni, si] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size")];
  const byName = new Map<string, [number, number]>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    const type = types[s.nodes[i + ti]];
    const name = type === "object" || type === "native" ? (s.strings[s.nodes[i + ni]] as string) : `(${type})`;
    const entry = byName.get(name) ?? [0, 0];
    entry[0] += s.nodes[i + si];
    entry[1]++;
    byName.set(name, entry);
    total += s.nodes[i + si];
  }
  return { total, byName };
}

async function measure(delta: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "heap-discovery-"));
  const snapshotDir = mkdtempSync(join(tmpdir(), "heap-discovery-snapshots-"));
  folderForHeap(dir);
  const bin = join(ROOT, "build", "out", "disco-discovery.mjs");
  const args = [...MEMORY_PROBE_ARGS, bin, "discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF];
  const env = { ...process.env, ...(snapshots ? { MEMORY_PROBE_SNAPSHOTS: snapshotDir } : {}) };
  const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env });
  const probe = MemoryProbe.of(proc);
  let out = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c));
  proc.stderr!.on("data", (c: Buffer) => (out += c));
  try {
    await until(() => out.includes("disco-discovery listening: "));
    const address = (JSON.parse(out.split("disco-discovery listening: ")[1].split("\n")[0]) as { grpc: string }).grpc;
    const channels = Array.from(
      { length: Math.ceil(count / 50) + 1 },
      () => new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }),
    );
    const warm = lightClientForHeap(channels.at(-1)!, 99_999, delta);
    await until(() => warm.version !== "");
    const rss0 = rssMiB(proc.pid!) * 1024 * 1024;
    const before = await probe.read();
    const t0 = performance.now();
    const clients = Array.from({ length: count }, (_, i) => lightClientForHeap(channels[Math.floor(i / 50)], i, delta));
    let peak = rss0;
    await until(() => {
      peak = Math.max(peak, rssMiB(proc.pid!) * 1024 * 1024);
      return clients.every((c) => c.version !== "");
    });
    const configuredMs = performance.now() - t0;
    await sleep(2000);
    const rss1 = rssMiB(proc.pid!) * 1024 * 1024;
    const after = await probe.read();
    console.log(
      `disco-discovery memory per ${delta ? "delta" : "state-of-the-world"} client (${count} clients, fresh daemon): ` +
        `live after GC ${kib(liveBytes(after) - liveBytes(before))} (heap ${kib(after.heapUsed - before.heapUsed)}, external ${kib(after.external - before.external)}); ` +
        `resident growth ${kib(rss1 - rss0)} (after GC ${kib(after.rss - before.rss)}; at the peak ${kib(peak - rss0)}); all configured in ${(configuredMs / 1000).toFixed(1)} s`,
    );
    if (before.snapshot && after.snapshot) {
      const [b, a] = [heapByName(before.snapshot), heapByName(after.snapshot)];
      console.log(`  heap snapshots: ${kib(a.total - b.total)} per client; the largest parts:`);
      const rows = [...a.byName].map(([name, [bytes, objects]]) => {
        const [b0, o0] = b.byName.get(name) ?? [0, 0];
        return { name, bytes: (bytes - b0) / count, objects: (objects - o0) / count };
      });
      for (const r of rows.sort((x, y) => y.bytes - x.bytes).slice(0, 15))
        console.log(`  ${r.bytes.toFixed(0).padStart(7)} B ${r.objects.toFixed(1).padStart(6)} objects  ${r.name.slice(0, 60)}`);
    }
    for (const c of channels) c.close();
  } finally {
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    rmSync(snapshotDir, { recursive: true, force: true });
  }
}

for (const delta of modes) await measure(delta);
