// The sidecar's hub calls alone: CPU per Check of the hub transport (this
// process, all its threads) and of a real `hubs server` (its own process),
// calls made as the agent makes them (bursts of 16 identical Checks;
// HUB_CALLS_BURST=1: one call at a time). With
// HUB_CALLS_COMPARE=<dir of another built checkout> that checkout's
// HubTransport joins the same interleaved rounds against the same hub, so a
// transport change is measured before and after under one load.
// Not part of `npm run bench`; run alone: node --import tsx test/bench/hub_calls.ts
import { loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseClusters } from "../../host/hub/clusters.ts";
import { HubTransport } from "../../host/hub/transport.ts";
import { checkRequest, startHub } from "../hubs/support/hub_process.ts";
import { messageType } from "../../host/wire/protos.ts";
import type { GrpcCall } from "../../host/wasm/abi_types.ts";
import { cpuSeconds } from "./process_usage.ts";
import { median } from "./stats.ts";

const BURSTS = Number(process.env.HUB_CALLS_BURSTS ?? 300);
const BURST = Number(process.env.HUB_CALLS_BURST ?? 16);
const ROUNDS = Number(process.env.HUB_CALLS_ROUNDS ?? 5);
const COMPARE = process.env.HUB_CALLS_COMPARE;

interface Caller {
  call(call: GrpcCall): Promise<{ ok: boolean }>;
  close(): void;
}

const t = messageType("mesh.hub.v1.CheckRequest");
const message = t.encode(t.fromObject(checkRequest({ "request.path": "/home", "source.uid": "kubernetes://petstore-1.demo" }))).finish();
const call = (): GrpcCall => ({
  token: 1,
  rootId: 1,
  cluster: "hub_server",
  service: "mesh.hub.v1.Hub",
  method: "Check",
  metadata: [["x-mesh-retry-policy", "max-retry=0;base-retry-wait-ms=80;max-retry-wait-ms=1000"]],
  message,
  timeoutMs: 5000,
});

async function run(caller: Caller, hubPid: number): Promise<{ clientUs: number; hubUs: number }> {
  const started = process.cpuUsage();
  const hubStarted = cpuSeconds(hubPid);
  for (let b = 0; b < BURSTS; b++) {
    const results = await Promise.all(Array.from({ length: BURST }, () => caller.call(call())));
    if (!results.every((r) => r.ok)) throw new Error(`a call failed: ${JSON.stringify(results.find((r) => !r.ok))}`);
  }
  const used = process.cpuUsage(started);
  const n = BURSTS * BURST;
  return { clientUs: (used.user + used.system) / n, hubUs: ((cpuSeconds(hubPid) - hubStarted) * 1e6) / n };
}

const hub = await startHub();
try {
  const clusters = parseClusters([`hub_server=${hub.listeners.grpc}`]);
  const rows: Array<{ name: string; make: () => Caller }> = [{ name: "this checkout", make: () => new HubTransport({ clusters }) }];
  if (COMPARE) {
    const other = (await import(pathToFileURL(join(COMPARE, "host", "hub", "transport.ts")).href)) as { HubTransport: typeof HubTransport };
    rows.push({ name: `compared (${COMPARE})`, make: () => new other.HubTransport({ clusters }) as unknown as Caller });
  }
  const callers = rows.map((r) => r.make());
  // Warm-up: connections made, JIT settled.
  for (const c of callers) await run(c, hub.proc.pid!);
  const samples = rows.map(() => ({ client: [] as number[], hub: [] as number[] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < rows.length; i++) {
      const r = await run(callers[i], hub.proc.pid!);
      samples[i].client.push(r.clientUs);
      samples[i].hub.push(r.hubUs);
    }
  }
  console.log(
    `hub calls: ${BURSTS} bursts of ${BURST} Checks per round, ${ROUNDS} interleaved rounds (medians); CPU µs per call; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  for (let i = 0; i < rows.length; i++) {
    console.log(
      `${rows[i].name.padEnd(40)} transport ${median(samples[i].client).toFixed(0).padStart(5)}   hub ${median(samples[i].hub).toFixed(0).padStart(5)}`,
    );
  }
  for (const c of callers) c.close();
} finally {
  await hub.stop();
}
