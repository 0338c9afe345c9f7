import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { type Socket, connect } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { tempDir } from "../support/processes.ts";
import { send, stats, waitFor } from "./security_support.ts";

// Issue 25 item 5: silent TCP connections to a PERMISSIVE or STRICT inbound
// port (no first byte, or a TLS handshake begun and never finished) must not
// lock the port. With a small --maxConnections and a header read timeout far
// longer than the test, twice the limit of such connections is opened; the
// oldest are evicted to make room, and a real client (plain text on
// PERMISSIVE, mutual TLS from another sidecar on STRICT) is still served.

const MAX_CONNECTIONS = 20;
const FLOOD = 2 * MAX_CONNECTIONS;
const LIMITS = ["--maxConnections", String(MAX_CONNECTIONS), "--headerReadTimeout", "300s"];

const CONFIG = `apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: locked}
spec: {selector: {app: httpbin}, ports: [{name: http, port: 8000, targetPort: 80}]}
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: default, namespace: locked}
spec: {mtls: {mode: STRICT}}
`;

// The first five bytes of a TLS handshake record, and nothing after: a handshake begun, never finished.
const HANDSHAKE_BEGUN = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]);

function silent(port: number, first?: Buffer): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      if (first) socket.write(first);
      resolve(socket);
    });
    socket.on("error", () => undefined);
    socket.once("error", reject);
  });
}

describe("silent connections do not lock a security-enabled port (issue 25 item 5)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-lockout-");
  let ca: Awaited<ReturnType<typeof startMeshCa>> | undefined;
  const w: Record<string, SecureWorkload> = {};
  const flood: Socket[] = [];

  before(async () => {
    writeFileSync(join(dir, "mesh.yaml"), CONFIG);
    ca = await startMeshCa();
    const base = { configDir: dir, ca, extraArgs: LIMITS };
    [w.permissive, w.strict] = await Promise.all([
      startSecureWorkload({ ...base, name: "httpbin", namespace: "open" }),
      startSecureWorkload({ ...base, name: "httpbin", namespace: "locked" }),
    ]);
    w.sleep = await startSecureWorkload({ configDir: dir, ca, name: "sleep", namespace: "locked", endpoints: [`httpbin.locked.svc.cluster.local:8000=127.0.0.1:${w.strict.inbound},sidecar,sa=httpbin`] });
  });
  after(async () => {
    for (const s of flood) s.destroy();
    await Promise.all(Object.values(w).map((x) => x.stop()));
    await ca?.stop();
  });

  const counter = async (x: SecureWorkload, name: string) => (await stats(x.adminUrl)).get(`listener.inbound.${name}`) ?? 0;
  const status = (o: Awaited<ReturnType<typeof send>>) => (o.outcome === "http" ? o.status : o.error);

  it("PERMISSIVE: connections that never send a first byte are evicted oldest first; a plain-text client gets in", async () => {
    for (let i = 0; i < FLOOD; i++) flood.push(await silent(w.permissive.inbound));
    await waitFor("the flood accepted and cut to the limit", async () => ((await counter(w.permissive, "connections_evicted")) + (await counter(w.permissive, "connections_refused")) >= FLOOD - MAX_CONNECTIONS ? true : undefined));
    assert.equal(await counter(w.permissive, "connections_refused"), 0, "no connection was turned away: the silent ones made room");
    assert.ok((await counter(w.permissive, "connections")) <= MAX_CONNECTIONS);
    assert.equal(status(await send(w.permissive.inbound, { path: "/get" })), 200);
    assert.equal(await counter(w.permissive, "connections_refused"), 0, "no client was turned away");
  });

  it("STRICT: connections silent or stuck mid-handshake are evicted; a mutual-TLS client gets in", async () => {
    for (let i = 0; i < FLOOD; i++) flood.push(await silent(w.strict.inbound, i % 2 === 0 ? HANDSHAKE_BEGUN : undefined));
    await waitFor("the flood accepted and cut to the limit", async () => ((await counter(w.strict, "connections_evicted")) + (await counter(w.strict, "connections_refused")) >= FLOOD - MAX_CONNECTIONS ? true : undefined));
    assert.equal(await counter(w.strict, "connections_refused"), 0, "no connection was turned away: the silent ones made room");
    assert.ok((await counter(w.strict, "connections")) <= MAX_CONNECTIONS);
    const viaSleep = await send(w.sleep.outbound, { host: "httpbin.locked.svc.cluster.local:8000", path: "/headers" });
    assert.equal(status(viaSleep), 200);
    assert.equal((await stats(w.strict.adminUrl)).get("inbound.mtls_requests"), 1);
    assert.equal(await counter(w.strict, "connections_refused"), 0, "no client was turned away");
  });
});
