// Test support: a real redis-server (Debian's; `npm test` installs it when
// missing, build/system-tools.mjs) on a free loopback port with its own
// temporary folder and no persistence, owned by the test file's process
// (processes.ts): stopped in every outcome. It can be killed and started
// again on the same port, as an outage would.
import type { ChildProcess } from "node:child_process";
import { connect, createServer } from "node:net";
import { spawnOwned, stopOwned, tempDir, waitFor } from "./processes.ts";

export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:PORT` */
  url: string;
  /** SIGKILL: what a crash looks like to clients (no goodbye, data gone). */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence), once killed or stopped. */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: a server that accepts nothing and answers nothing, without closing connections. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  /** Runs one command with redis-cli semantics over RESP; resolves with the raw reply text. */
  command(...args: string[]): Promise<string>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** One RESP command on a fresh connection; the reply as text (`+OK`, `:3`, `$5 hello`, `*2 …`). */
export function redisCommand(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      reply += chunk;
      if (complete(reply)) {
        socket.end();
        resolve(reply);
      }
    });
    socket.on("error", reject);
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`);
  });
}

// Enough of RESP to know when a reply to a simple command has arrived.
function complete(text: string): boolean {
  const parse = (at: number): number => {
    const end = text.indexOf("\r\n", at);
    if (end < 0) return -1;
    const head = text[at];
    const n = Number(text.slice(at + 1, end));
    if (head === "$") return n < 0 ? end + 2 : text.length >= end + 2 + n + 2 ? end + 2 + n + 2 : -1;
    if (head === "*") {
      let pos = end + 2;
      for (let i = 0; i < n; i++) {
        pos = parse(pos);
        if (pos < 0) return -1;
      }
      return pos;
    }
    return end + 2;
  };
  return parse(0) === text.length;
}

/** TLS files for `--tls-port`: clients are not asked for certificates. */
export interface RedisTls {
  certFile: string;
  keyFile: string;
  caFile: string;
}

/**
 * Starts redis-server on a free loopback port (or `port`), ready for
 * commands; with `tls` that port speaks TLS only (and `command` is not available).
 */
export async function startRedis(port?: number, tls?: RedisTls): Promise<RedisServer> {
  const chosen = port ?? (await freePort());
  const portArgs = tls
    ? ["--port", "0", "--tls-port", String(chosen), "--tls-cert-file", tls.certFile, "--tls-key-file", tls.keyFile, "--tls-ca-cert-file", tls.caFile, "--tls-auth-clients", "no"]
    : ["--port", String(chosen)];
  const dir = tempDir("mesh-redis-");
  let proc: ChildProcess | undefined;
  let output = "";
  const launch = async () => {
    output = "";
    const p = spawnOwned("redis-server", [...portArgs, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--protected-mode", "no", "--daemonize", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    p.stdout!.on("data", (c: Buffer) => (output += c.toString()));
    p.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    const spawnError = new Promise<never>((_, reject) => p.once("error", (e) => reject(new Error(`redis-server could not start (${e.message}): node build/system-tools.mjs installs it`))));
    proc = p;
    await Promise.race([
      spawnError,
      waitFor(`redis-server on port ${chosen}`, async () => {
        if (p.exitCode !== null) throw new Error(`redis-server exited with ${p.exitCode}: ${output.slice(-2000)}`);
        if (tls) return /Ready to accept connections/.test(output);
        return (await redisCommand(chosen, ["PING"])) === "+PONG\r\n";
      }),
    ]);
  };
  await launch();
  const stopNow = async (signal: NodeJS.Signals) => {
    if (proc) await stopOwned(proc, signal, 10_000);
  };
  return {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    kill: () => stopNow("SIGKILL"),
    restart: launch,
    pause: () => proc?.kill("SIGSTOP"),
    resume: () => proc?.kill("SIGCONT"),
    stop: async () => {
      proc?.kill("SIGCONT");
      await stopNow("SIGTERM");
    },
    command: (...args) => redisCommand(chosen, args),
  };
}
