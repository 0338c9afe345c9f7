// Peers for the transport tests, all real sockets on loopback: a scripted
// in-process gRPC hub, a TCP server that accepts and never answers, and a port
// nobody listens on.
import * as grpc from "@grpc/grpc-js";
import { createServer, type Server, type Socket } from "node:net";
import type { GrpcCall } from "../../../host/wasm/abi_types.ts";

export const HUB_SERVICE = "mesh.hub.v1.Hub";

/** What the scripted hub does with one attempt. */
export type Step = { respond: Uint8Array } | { fail: { code: number; details: string } } | { hang: true } | { echo: true };

export interface Received {
  method: string;
  message: Buffer;
  metadata: Record<string, unknown>;
  /** The client's address: one value per connection. */
  peer: string;
}

const raw = (name: string) => ({
  path: `/${HUB_SERVICE}/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
});

/** A gRPC server answering Check and Report from `script`, one step per attempt (echo when empty). */
export class ScriptedHub {
  readonly received: Received[] = [];
  script: Step[] = [];

  private constructor(
    private readonly server: grpc.Server,
    readonly target: string,
  ) {}

  static async start(bind = "127.0.0.1:0"): Promise<ScriptedHub> {
    const server = new grpc.Server();
    let hub: ScriptedHub | undefined;
    const handler =
      (name: string): grpc.handleUnaryCall<Buffer, Buffer> =>
      (call, callback) => {
        hub!.received.push({ method: name, message: call.request, metadata: call.metadata.getMap(), peer: call.getPeer() });
        const step = hub!.script.shift() ?? { echo: true };
        if ("respond" in step) callback(null, Buffer.from(step.respond));
        else if ("fail" in step) callback({ code: step.fail.code, details: step.fail.details });
        else if ("echo" in step) callback(null, call.request);
        // hang: never answer
      };
    server.addService({ Check: raw("Check"), Report: raw("Report") }, { Check: handler("Check"), Report: handler("Report") });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(bind, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    hub = new ScriptedHub(server, bind.startsWith("unix:") ? bind : `127.0.0.1:${port}`);
    return hub;
  }

  get port(): number {
    return Number(this.target.slice(this.target.lastIndexOf(":") + 1));
  }

  close(): void {
    this.server.forceShutdown();
  }
}

/** A TCP server that accepts connections and never writes a byte. */
export async function startSilentServer(): Promise<{ port: number; accepted(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port that was just free: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The retry policy metadata value the module writes. */
export function retryPolicy(maxRetry: number, baseMs = 80, maxMs = 1000): [string, string] {
  return ["x-mesh-retry-policy", `max-retry=${maxRetry};base-retry-wait-ms=${baseMs};max-retry-wait-ms=${maxMs}`];
}

let nextToken = 1;

/** A GrpcCall as ProxyWasmVm hands it over. */
export function grpcCall(overrides: Partial<GrpcCall> = {}): GrpcCall {
  return {
    token: nextToken++,
    rootId: 1,
    cluster: "hub_server",
    service: HUB_SERVICE,
    method: "Check",
    metadata: [retryPolicy(0)],
    message: new Uint8Array([0x1a, 0x03, 0x61, 0x2d, 0x31]),
    timeoutMs: 5000,
    ...overrides,
  };
}
