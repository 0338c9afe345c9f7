// An idle hub connection does not keep the process alive: a program that made
// a hub call and has nothing else to do exits without closing the transport
// (the connection and its keep-alive timer are unref'd), as the sidecar's
// short-lived tools and the embedding library rely on.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, it } from "node:test";
import { answerOk, RawHub } from "./support/raw_hub.ts";

const ANSWER = new Uint8Array([8, 1]);
let hub: RawHub | undefined;
after(() => hub?.close());

it("a process whose only handle is an idle hub connection exits by itself after its call", async () => {
  hub = await RawHub.start((stream) => answerOk(stream, ANSWER));
  const code = `
    import { HubTransport } from "./host/hub/transport.ts";
    import { parseClusters } from "./host/hub/clusters.ts";
    const transport = new HubTransport({ clusters: parseClusters(["hub_server=${hub.target}"]) });
    const r = await transport.call({ token: 1, rootId: 1, cluster: "hub_server", service: "mesh.hub.v1.Hub", method: "Check", metadata: [], message: new Uint8Array([1]), timeoutMs: 30000 });
    process.stdout.write(JSON.stringify({ ok: r.ok, attempts: r.attempts }));
  `;
  // A process held by its connection would never exit; 60 s is far beyond the call itself.
  const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
    execFile(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout }),
    ),
  );
  assert.deepEqual(JSON.parse(stdout), { ok: true, attempts: 1 });
  assert.equal(hub.accepted, 1);
  assert.equal(hub.sessions.size <= 1, true);
});
