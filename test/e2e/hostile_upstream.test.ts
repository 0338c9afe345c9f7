import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { readResponses } from "../support/http_messages.ts";
import { tempDir } from "../support/processes.ts";
import { type RawAnswer, type RawHttpApp, startRawHttpApp } from "../support/raw_http_app.ts";
import { stats } from "./security_support.ts";

// Issue 25 item 4: a hostile upstream must not kill the proxy. A real
// sidecar in front of a raw TCP app that answers each path with one kind of
// bad response; the client gets what Envoy answers (502 for a protocol
// error, 503 for a reset or close before the headers, a reset stream when
// the body is cut short after the headers) and the agent keeps serving.

const answers: Record<string, string | ((socket: Parameters<RawAnswer>[1]) => undefined)> = {
  "/ok": "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
  "/status-099": "HTTP/1.1 099 Odd\r\ncontent-length: 0\r\n\r\n",
  "/status-000": "HTTP/1.1 000 Zero\r\ncontent-length: 0\r\n\r\n",
  "/switching-protocols": "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\nraw bytes of another protocol",
  "/switching-protocols-bare": "HTTP/1.1 101 Switching Protocols\r\n\r\n",
  "/bad-status-line": "HTTP/1.1 abc\r\ncontent-length: 0\r\n\r\n",
  "/not-http": "SSH-2.0-OpenSSH_9.6\r\n",
  "/huge-headers": `HTTP/1.1 200 OK\r\nx-huge: ${"h".repeat(70 * 1024)}\r\ncontent-length: 2\r\n\r\nok`,
  "/both-framings": "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
  "/early-hints": "HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
  "/reset": (socket) => void socket.resetAndDestroy(),
  "/close-before-headers": (socket) => void socket.end(),
  "/truncated": (socket) => {
    socket.end("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort");
    return undefined;
  },
};

const hostile: RawAnswer = (request, socket) => {
  const a = answers[request.target] ?? answers["/ok"];
  return typeof a === "string" ? a : a(socket);
};

/** One request on a fresh connection; the bytes until the proxy closes it. */
function exchange(port: number, path: string, host = "app.foo"): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    const deadline = setTimeout(() => socket.destroy(), 60_000);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(deadline);
      resolve(Buffer.concat(chunks));
    });
  });
}

async function status(port: number, path: string, host?: string): Promise<number | string> {
  const bytes = await exchange(port, path, host);
  const { responses, rest, malformed } = readResponses(bytes, ["GET"]);
  if (responses.length === 1) return responses[0].status;
  return `no complete response (${malformed ?? "cut short"}): ${JSON.stringify(rest.toString("latin1").slice(0, 80))}`;
}

describe("a hostile upstream does not kill the proxy (issue 25 item 4)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-hostile-upstream-");
  let ca: Awaited<ReturnType<typeof startMeshCa>> | undefined;
  let app: RawHttpApp;
  let sidecar: SecureWorkload;

  before(async () => {
    mkdirSync(join(dir, "config"));
    app = await startRawHttpApp(hostile);
    ca = await startMeshCa();
    sidecar = await startSecureWorkload({ name: "app", namespace: "foo", configDir: join(dir, "config"), ca, appPort: app.port });
  });
  after(async () => {
    await sidecar?.stop();
    await ca?.stop();
    await app?.close();
  });

  const alive = async () => {
    assert.equal(sidecar.sidecar.proc.exitCode, null, `the agent exited:\n${sidecar.sidecar.output().slice(-2000)}`);
    assert.equal(await status(sidecar.inbound, "/ok"), 200, "the agent still serves");
  };

  const rows: Array<[string, number]> = [
    ["/status-099", 502],
    ["/status-000", 502],
    ["/switching-protocols", 502],
    ["/switching-protocols-bare", 502],
    ["/bad-status-line", 502],
    ["/not-http", 502],
    ["/huge-headers", 502],
    ["/both-framings", 502],
    ["/reset", 503],
    ["/close-before-headers", 503],
    ["/early-hints", 200],
  ];
  for (const [path, expected] of rows) {
    it(`inbound: ${path} → ${expected}, and the agent keeps serving`, async () => {
      assert.equal(await status(sidecar.inbound, path), expected);
      await alive();
    });
  }

  it("inbound: a body cut short after the headers resets the client's stream (no complete response), and the agent keeps serving", async () => {
    const bytes = (await exchange(sidecar.inbound, "/truncated")).toString("latin1");
    assert.match(bytes, /^HTTP\/1\.1 200 /);
    assert.match(String(await status(sidecar.inbound, "/truncated")), /^no complete response/);
    await alive();
  });

  for (const [path, expected] of [["/status-099", 502], ["/switching-protocols", 502], ["/reset", 503]] as const) {
    it(`outbound, an external host through passthrough: ${path} → ${expected}`, async () => {
      assert.equal(await status(sidecar.outbound, path, `127.0.0.1:${app.port}`), expected);
      await alive();
    });
  }

  it("counts the upstream failures on /stats", async () => {
    const s = await stats(sidecar.adminUrl);
    assert.ok((s.get("listener.inbound.upstream_errors") ?? 0) >= rows.filter(([, e]) => e !== 200).length);
    assert.ok((s.get("listener.outbound.upstream_errors") ?? 0) >= 3);
    assert.equal(s.get("server.uncaught_request_errors"), 0, "no failure needed the safety net");
  });
});
