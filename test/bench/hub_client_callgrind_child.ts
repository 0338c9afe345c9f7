// The client side of test/bench/hub_client_callgrind.ts, run under callgrind:
// one checkout's HubTransport calling a hub. Warms each phase up
// uninstrumented, says `hub client ready {}`, then runs the next phase at
// each SIGUSR2 and prints `phase done N` (the parent counts between).
//   node --import tsx hub_client_callgrind_child.ts CHECKOUT HUB_TARGET MESSAGES_JSON CALLS WARM_UP PHASES_JSON
// PHASES_JSON: [[method, calls at once], …].
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [checkout, target, messagesFile, callsText, warmUpText, phasesJson] = process.argv.slice(2);
const CALLS = Number(callsText);
const WARM_UP = Number(warmUpText);
const PHASES = JSON.parse(phasesJson) as Array<["Check" | "Report", number]>;

interface Transport {
  call(call: object): Promise<{ ok: boolean; code?: number; message?: unknown }>;
}
const { HubTransport } = (await import(pathToFileURL(join(checkout, "host", "hub", "transport.ts")).href)) as { HubTransport: new (o: object) => Transport };
const { parseClusters } = (await import(pathToFileURL(join(checkout, "host", "hub", "clusters.ts")).href)) as { parseClusters: (s: string[]) => unknown };
const messages = JSON.parse(readFileSync(messagesFile, "utf8")) as Record<string, string>;
const bytes = { Check: Buffer.from(messages.Check, "base64"), Report: Buffer.from(messages.Report, "base64") };
const transport = new HubTransport({ clusters: parseClusters([`hub_server=${target}`]) });

async function run(method: "Check" | "Report", burst: number, calls: number): Promise<void> {
  for (let done = 0; done < calls; done += burst) {
    const results = await Promise.all(
      Array.from({ length: burst }, () =>
        transport.call({
          token: 1,
          rootId: 1,
          cluster: "hub_server",
          service: "mesh.hub.v1.Hub",
          method,
          metadata: [],
          message: bytes[method],
          timeoutMs: 120_000,
        }),
      ),
    );
    const failed = results.find((r) => !r.ok);
    if (failed) throw new Error(`${method} failed: ${failed.code} ${String(failed.message)}`);
  }
}

for (const [method, burst] of PHASES) await run(method, burst, WARM_UP);
let next = 0;
const keepAlive = setInterval(() => {}, 1 << 30);
process.on("SIGUSR2", () => {
  const [method, burst] = PHASES[next++];
  void run(method, burst, CALLS).then(
    () => console.log(`phase done ${next}`),
    (e) => {
      console.error(String(e));
      clearInterval(keepAlive);
      process.exit(1);
    },
  );
});
console.log("hub client ready {}");
