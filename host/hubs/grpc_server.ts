import * as grpc from "@grpc/grpc-js";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { rawUnaryMethod } from "../wire/raw_grpc.ts";
import { GRPC_CODES, grpcCodeName } from "../wire/status_codes.ts";
import type { LoadShedder } from "./load_shedder.ts";
import type { HubMetrics } from "./metrics.ts";
import { RpcError } from "./rpc_error.ts";

export const HUB_SERVICE = "mesh.hub.v1.Hub";

/** A unary method on raw message bytes: decoding happens inside, so garbage becomes INVALID_ARGUMENT, never a crash. */
export type RawUnaryHandler = (request: Buffer) => Buffer | Promise<Buffer>;

export interface HubGrpcOptions {
  maxMessageSize: number;
  maxConcurrentStreams: number;
  handlers: { Check: RawUnaryHandler; Report: RawUnaryHandler };
  shedder: LoadShedder;
  metrics: HubMetrics;
  log: ScopedLogger;
  sheddingLog: ScopedLogger;
  /** Mutual TLS: why a call's client certificate is refused (PERMISSION_DENIED), or undefined to let it through. */
  peerProblem?: (peerSubjectAltName: string | undefined) => string | undefined;
}

function method(name: string): grpc.MethodDefinition<Buffer, Buffer> {
  return rawUnaryMethod(`/${HUB_SERVICE}/${name}`);
}

/**
 * The gRPC server of `mesh.hub.v1.Hub`. Every call passes the load shedder
 * first (enforce: UNAVAILABLE, counted in hub_loadshedding_requests_throttled;
 * logonly: logged, counted, served) and its duration feeds the shedder's latency average; then
 * the handler; RpcErrors become their status, anything else INTERNAL.
 * Messages above maxMessageSize are refused by grpc-js with RESOURCE_EXHAUSTED
 * before any handler runs.
 */
export function createHubGrpcServer(options: HubGrpcOptions): grpc.Server {
  const server = new grpc.Server({
    "grpc.max_receive_message_length": options.maxMessageSize,
    "grpc.max_concurrent_streams": options.maxConcurrentStreams,
    // grpc-js tracks every call and session for channelz unless told not to; no program serves channelz (build/build.mjs)
    "grpc.enable_channelz": 0,
  });
  const { metrics, log } = options;
  let throttledLogged = 0;
  const wrap = (name: "Check" | "Report"): grpc.handleUnaryCall<Buffer, Buffer> => {
    const counted = metrics.grpc.forMethod(HUB_SERVICE, name);
    const handler = options.handlers[name];
    return (call, callback) => {
      counted.started();
      const fail = (code: number, details: string) => {
        counted.handled(grpcCodeName(code));
        callback({ code, details });
      };
      if (options.peerProblem) {
        const problem = options.peerProblem(call.getAuthContext()?.sslPeerCertificate?.subjectaltname);
        if (problem !== undefined) {
          log.warn(`${name} refused: ${problem}`, { peer: call.getPeer() });
          fail(GRPC_CODES.PERMISSION_DENIED, problem);
          return;
        }
      }
      const began = performance.now();
      const verdict = options.shedder.judge();
      if (verdict.action !== "serve") {
        const shed = verdict.action === "shed";
        if (shed) {
          metrics.throttled.inc();
          metrics.predictedCostShed.inc();
        } else metrics.loggedOnly.inc();
        // one line per second at most: a flood of refusals must not become a flood of logs
        const now = Date.now();
        if (now - throttledLogged >= 1000) {
          throttledLogged = now;
          if (shed) options.sheddingLog.warn(`throttled (${verdict.evaluator}): ${verdict.reason}`);
          else options.sheddingLog.info(`logonly: would throttle (${verdict.evaluator}): ${verdict.reason}; served`);
        }
        if (shed) {
          fail(GRPC_CODES.UNAVAILABLE, `hub is overloaded: ${verdict.reason}; request dropped by load shedding`);
          options.shedder.observe(performance.now() - began);
          return;
        }
      }
      const succeeded = (response: Buffer) => {
        counted.handled("OK");
        callback(null, response);
        options.shedder.observe(performance.now() - began);
      };
      const failed = (e: unknown) => {
        if (e instanceof RpcError) {
          if (log.enabled("debug")) log.debug(`${name} failed: ${grpcCodeName(e.code)}: ${e.message}`);
          fail(e.code, e.message);
        } else {
          log.error(`${name} failed: ${(e as Error)?.stack ?? String(e)}`);
          fail(GRPC_CODES.INTERNAL, `internal error: ${(e as Error)?.message ?? String(e)}`);
        }
        options.shedder.observe(performance.now() - began);
      };
      // A handler that answers at once is answered at once: no promise (and no microtask) per call.
      let answer: Buffer | Promise<Buffer>;
      try {
        answer = handler(call.request);
      } catch (e) {
        failed(e);
        return;
      }
      if (answer instanceof Promise) answer.then(succeeded, failed);
      else succeeded(answer);
    };
  };
  server.addService({ Check: method("Check"), Report: method("Report") }, { Check: wrap("Check"), Report: wrap("Report") });
  return server;
}

/** `tcp://HOST:PORT` → `HOST:PORT`, `unix://PATH` → `unix:PATH` (grpc-js forms); throws for anything else. */
export function grpcBindAddress(address: string, port: number): string {
  if (!address) return `0.0.0.0:${port}`;
  if (address.startsWith("tcp://")) {
    const hostPort = address.slice("tcp://".length);
    if (!/^(\[[^\]]+\]|[^:[\]]*):\d+$/.test(hostPort)) throw new Error(`--address ${address}: expected tcp://HOST:PORT`);
    return hostPort.startsWith(":") ? `0.0.0.0${hostPort}` : hostPort;
  }
  if (address.startsWith("unix://")) {
    const path = address.slice("unix://".length);
    if (!path) throw new Error(`--address ${address}: expected unix://PATH`);
    return `unix:${path}`;
  }
  throw new Error(`--address ${address}: expected tcp://HOST:PORT or unix://PATH`);
}

export function bindGrpc(
  server: grpc.Server,
  bindAddress: string,
  credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(bindAddress, credentials, (err, port) => (err ? reject(err) : resolve(port)));
  });
}
