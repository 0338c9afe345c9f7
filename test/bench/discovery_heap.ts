// Where disco-discovery's memory per connected client goes: the daemon (the
// built one, build/out) under --heapsnapshot-signal, one warm client, a heap
// snapshot, N more Envoy-like clients (test/bench/discovery.ts's, state of
// the world or incremental), another snapshot; printed: the heap growth per
// client and its largest parts by V8 node name. Not part of `npm run bench`:
//   MODE=delta N=300 node --import tsx test/bench/discovery_heap.ts
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { folderForHeap, lightClientForHeap } from "./discovery.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const count = Number(process.env.N ?? 300);
const delta = process.env.MODE === "delta";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(ok: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 600_000; !ok(); await sleep(50)) if (Date.now() > deadline) throw new Error("timed out");
}

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

const dir = mkdtempSync(join(tmpdir(), "heap-discovery-"));
const snapshots = mkdtempSync(join(tmpdir(), "heap-discovery-snapshots-"));
folderForHeap(dir);
const bin = join(ROOT, "build", "out", "disco-discovery.mjs");
const args = ["--heapsnapshot-signal=SIGUSR2", bin, "discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF];
const proc = spawn(process.execPath, args, { cwd: snapshots, stdio: ["ignore", "pipe", "pipe"] });
let out = "";
proc.stdout!.on("data", (c: Buffer) => (out += c));
proc.stderr!.on("data", (c: Buffer) => (out += c));
try {
  await until(() => out.includes("disco-discovery listening: "));
  const address = (JSON.parse(out.split("disco-discovery listening: ")[1].split("\n")[0]) as { grpc: string }).grpc;
  /** A heap snapshot, once V8 has finished writing it. */
  const snapshot = async (): Promise<string> => {
    const files = () => readdirSync(snapshots).filter((f) => f.endsWith(".heapsnapshot"));
    const before = files().length;
    proc.kill("SIGUSR2");
    await until(() => files().length > before);
    const file = join(snapshots, files().sort().at(-1)!);
    for (let size = -1; ; await sleep(1500)) {
      const now = statSync(file).size;
      if (now === size && now > 0) break;
      size = now;
    }
    return file;
  };
  const channels = Array.from(
    { length: Math.ceil(count / 50) + 1 },
    () => new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }),
  );
  const warm = lightClientForHeap(channels.at(-1)!, 99_999, delta); // the views every client shares exist before the first snapshot
  await until(() => warm.version !== "");
  const before = heapByName(await snapshot());
  const clients = Array.from({ length: count }, (_, i) => lightClientForHeap(channels[Math.floor(i / 50)], i, delta));
  await until(() => clients.every((c) => c.version !== ""));
  await sleep(2000);
  const after = heapByName(await snapshot());
  console.log(
    `disco-discovery heap per ${delta ? "delta" : "state-of-the-world"} client (${count} clients): ${((after.total - before.total) / count / 1024).toFixed(1)} KiB`,
  );
  const rows = [...after.byName].map(([name, [bytes, objects]]) => {
    const [b0, o0] = before.byName.get(name) ?? [0, 0];
    return { name, bytes: (bytes - b0) / count, objects: (objects - o0) / count };
  });
  for (const r of rows.sort((x, y) => y.bytes - x.bytes).slice(0, 15))
    console.log(`${r.bytes.toFixed(0).padStart(7)} B ${r.objects.toFixed(1).padStart(6)} objects  ${r.name.slice(0, 60)}`);
  for (const c of channels) c.close();
} finally {
  proc.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  rmSync(snapshots, { recursive: true, force: true });
}
