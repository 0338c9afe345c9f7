// The daemons' knobs take effect or are refused with their reason, on real
// processes: a listener that cannot be opened stops the start with exit 1
// naming its flag; a malformed variable exits 2 naming it; the gRPC stream
// limits and keepalive reach the HTTP/2 connection a client sees; the
// agent's --parentShutdownDuration cuts a drain; disco-discovery takes its
// common flags before the subcommand.
import assert from "node:assert/strict";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer as createHttpServer, request } from "node:http";
import { connect as connectHttp2 } from "node:http2";
import { type AddressInfo, type Server, createServer, connect as connectTcp } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AGENT_BIN, DISCOVERY_BIN, HUBS_BIN, MESH_CA_BIN } from "../../host/demo/binaries.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { runProcess, startDaemon, tempDir, waitFor } from "../support/processes.ts";

const node = (bin: string, args: string[], env: NodeJS.ProcessEnv = {}) => runProcess(process.execPath, [bin, ...args], { env: { ...process.env, ...env } });

let taken: Server;
let takenPort: number;
const empty = tempDir("flags-effect-");

before(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  takenPort = (taken.address() as AddressInfo).port;
});

after(() => taken?.close());

describe("a listener that cannot be opened: exit 1, one line naming the flag and the address", { timeout: 600_000 }, () => {
  const cases: Array<[string, string, string[], string]> = [
    ["hubs", HUBS_BIN, ["server", "--address", "tcp://127.0.0.1:0", "--ctrlz_port", "0", "--monitoringPort", "PORT"], "--monitoringPort PORT"],
    [
      "mesh_ca",
      MESH_CA_BIN,
      [
        "--self-signed-ca",
        "--self-signed-ca-cert-dir",
        join(empty, "ca"),
        "--grpc-address",
        "127.0.0.1",
        "--grpc-port",
        "PORT",
        "--monitoring-port",
        "0",
        "--ctrlz_port",
        "0",
      ],
      "--grpc-port 127.0.0.1:PORT",
    ],
    [
      "disco-discovery",
      DISCOVERY_BIN,
      ["discovery", "--configDir", empty, "--httpAddr", "", ...SIDE_LISTENERS_OFF, "--grpcAddr", "127.0.0.1:PORT"],
      "--grpcAddr 127.0.0.1:PORT",
    ],
    [
      "disco-agent",
      AGENT_BIN,
      ["proxy", "--configDir", empty, "--inboundPort", "0", "--outboundPort", "0", "--proxyAdminPort", "PORT"],
      "--proxyAdminPort 127.0.0.1:PORT",
    ],
  ];
  for (const [name, bin, args, named] of cases) {
    it(`${name}: ${named.split(" ")[0]} in use`, async () => {
      const r = await node(
        bin,
        args.map((a) => a.replace("PORT", String(takenPort))),
      );
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`${named.replace("PORT", String(takenPort)).replace(/[.[\]]/g, "\\$&")}: cannot listen: address already in use`));
    });
  }
});

describe("malformed variables and refused values: exit 2 naming them", { timeout: 600_000 }, () => {
  it("TERMINATION_DRAIN_DURATION_SECONDS=5s (seconds are an integer): disco-agent and disco-discovery", async () => {
    const agent = await node(AGENT_BIN, ["proxy", "--configDir", empty], { TERMINATION_DRAIN_DURATION_SECONDS: "5s" });
    assert.equal(agent.status, 2);
    assert.equal(agent.stderr, 'disco-agent proxy: TERMINATION_DRAIN_DURATION_SECONDS="5s": expected an integer from 0 to 2147483\n');
    const disco = await node(DISCOVERY_BIN, ["discovery", "--configDir", empty], { TERMINATION_DRAIN_DURATION_SECONDS: "soon" });
    assert.equal(disco.status, 2);
    assert.match(disco.stderr, /^disco-discovery discovery: TERMINATION_DRAIN_DURATION_SECONDS="soon": expected an integer/);
  });

  it("hubs --singleThreaded=false and mesh_ca --server-only=false ask for what this build cannot do", async () => {
    const hub = await node(HUBS_BIN, ["server", "--singleThreaded=false"]);
    assert.equal(hub.status, 2);
    assert.match(hub.stderr, /^hubs server: --singleThreaded: not applicable here: every call runs on the one JavaScript thread/);
    const ca = await node(MESH_CA_BIN, ["--server-only=false"]);
    assert.equal(ca.status, 2);
    assert.match(ca.stderr, /^mesh_ca: --server-only: not applicable here: no orchestrator secrets are ever written/);
  });

  it("hubs: the latency sampling flags without --averageLatencyThreshold, --burstSize without --maxRequestsPerSecond", async () => {
    for (const [flag, value] of [
      ["--latencySamplesPerSecond", "5"],
      ["--latencySampleHalflife", "2s"],
      ["--latencyEnforcementThreshold", "10"],
    ]) {
      const r = await node(HUBS_BIN, ["server", flag, value]);
      assert.equal(r.status, 2, flag);
      assert.equal(r.stderr, `hubs server: ${flag}: no effect without --averageLatencyThreshold (it shapes the latency evaluator that flag turns on)\n`);
    }
    const burst = await node(HUBS_BIN, ["server", "--burstSize", "3"]);
    assert.equal(burst.status, 2);
    assert.match(burst.stderr, /--burstSize: no effect without --maxRequestsPerSecond/);
  });
});

/** The server's HTTP/2 SETTINGS as a client sees them (node:http2). */
async function remoteSettings(authority: string): Promise<{ maxConcurrentStreams?: number }> {
  const session = connectHttp2(`http://${authority}`);
  try {
    await once(session, "remoteSettings");
    return session.remoteSettings;
  } finally {
    session.destroy();
  }
}

describe("gRPC stream limits and keepalive on the wire", { timeout: 600_000 }, () => {
  it("hubs --maxConcurrentStreams 7: the hub's HTTP/2 SETTINGS allow 7 streams per connection", async () => {
    const hub = await startDaemon<{ grpc: string }>(
      HUBS_BIN,
      ["server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1", "--maxConcurrentStreams", "7"],
      "hubs listening ",
    );
    try {
      assert.equal((await remoteSettings(hub.listening.grpc)).maxConcurrentStreams, 7);
    } finally {
      await hub.stop();
    }
  });

  it("disco-discovery with MESH_GPRC_MAXSTREAMS and --keepaliveInterval/--keepaliveTimeout given before the subcommand: SETTINGS, a PING, then the unanswered connection closed", async () => {
    const disco = await startDaemon<{ grpc: string }>(
      DISCOVERY_BIN,
      [
        "--keepaliveInterval",
        "1s",
        "--keepaliveTimeout",
        "1s",
        "--log_as_json",
        "discovery",
        "--configDir",
        empty,
        "--grpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "",
        ...SIDE_LISTENERS_OFF,
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, MESH_GPRC_MAXSTREAMS: "9" },
    );
    try {
      const [host, port] = [disco.listening.grpc.replace(/:\d+$/, ""), Number(disco.listening.grpc.split(":").pop())];
      // A raw HTTP/2 client that never answers a PING: the server's keepalive must notice.
      const socket = connectTcp(port, host);
      await once(socket, "connect");
      socket.write(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frame(4, 0, Buffer.alloc(0))]));
      let buffered = Buffer.alloc(0);
      const frames: Array<{ type: number; flags: number; payload: Buffer }> = [];
      socket.on("data", (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 9) {
          const length = buffered.readUIntBE(0, 3);
          if (buffered.length < 9 + length) break;
          frames.push({ type: buffered[3], flags: buffered[4], payload: buffered.subarray(9, 9 + length) });
          buffered = buffered.subarray(9 + length);
        }
      });
      const closed = once(socket, "close");
      const settings = await waitFor("the server's SETTINGS", () => frames.find((f) => f.type === 4 && (f.flags & 1) === 0));
      const values = new Map<number, number>();
      for (let i = 0; i + 6 <= settings.payload.length; i += 6) values.set(settings.payload.readUInt16BE(i), settings.payload.readUInt32BE(i + 2));
      assert.equal(values.get(3), 9, "SETTINGS_MAX_CONCURRENT_STREAMS is MESH_GPRC_MAXSTREAMS");
      // The default interval is 30 s: a PING well before that is --keepaliveInterval's.
      const pingedAt = Date.now();
      await waitFor("a keepalive PING", () => frames.some((f) => f.type === 6 && (f.flags & 1) === 0), 20_000);
      assert.ok(Date.now() - pingedAt < 20_000);
      // Not answered: closed after --keepaliveTimeout (1 s; the default would be 10 s).
      const sinceProbe = Date.now();
      await closed;
      assert.ok(Date.now() - sinceProbe < 8_000, `closed ${Date.now() - sinceProbe} ms after the PING`);
      assert.match(disco.output(), /^\{"time":"[^"]+","level":"info","scope":"ads",/m, "--log_as_json before the subcommand applies");
    } finally {
      await disco.stop();
    }
  });
});

/** One HTTP/2 frame. */
function frame(type: number, flags: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  return Buffer.concat([header, payload]);
}

describe("disco-agent: --parentShutdownDuration bounds the shutdown; a mesh_ca that does not answer fails the start", { timeout: 600_000 }, () => {
  it("a request that never ends, TERMINATION_DRAIN_DURATION_SECONDS=120, --parentShutdownDuration 2s: the agent exits 0 at the limit, not after 120 s", async () => {
    let arrived = false;
    const app = createHttpServer(() => void (arrived = true)); // answers nothing
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    const appPort = (app.address() as AddressInfo).port;
    const agent = await startDaemon<{ inbound: number }>(
      AGENT_BIN,
      [
        "proxy",
        "--configDir",
        empty,
        "--inboundPort",
        "0",
        "--outboundPort",
        "0",
        "--proxyAdminPort",
        "0",
        "--appPort",
        String(appPort),
        "--parentShutdownDuration",
        "2s",
      ],
      "disco-agent listening ",
      undefined,
      { ...process.env, TERMINATION_DRAIN_DURATION_SECONDS: "120" },
    );
    try {
      const hanging = request({ host: "127.0.0.1", port: agent.listening.inbound, path: "/slow" });
      hanging.on("error", () => undefined);
      hanging.end();
      await waitFor("the request in flight at the app", () => arrived);
      const signalled = Date.now();
      const code = await agent.stop("SIGTERM");
      assert.equal(code, 0);
      assert.ok(Date.now() - signalled < 60_000, "well before TERMINATION_DRAIN_DURATION_SECONDS");
      assert.match(agent.output(), /--parentShutdownDuration 2s cuts the drain of 2m0s/);
    } finally {
      app.closeAllConnections();
      app.close();
    }
  });

  it("--caAddress of a server that accepts and never answers: exit 1 naming --caAddress after --connectTimeout", async () => {
    writeFileSync(join(empty, "token"), "not-a-jwt");
    const r = await node(AGENT_BIN, [
      "proxy",
      "--configDir",
      empty,
      "--inboundPort",
      "0",
      "--outboundPort",
      "0",
      "--proxyAdminPort",
      "0",
      "--caAddress",
      `127.0.0.1:${takenPort}`,
      "--tokenPath",
      join(empty, "token"),
      "--connectTimeout",
      "2s",
    ]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`--caAddress 127\\.0\\.0\\.1:${takenPort}: no workload certificate: .*Deadline exceeded`));
  });
});
