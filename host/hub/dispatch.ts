// Glue between the proxy-wasm host and the hub transport: each proxy_grpc_call
// the module makes is run by the transport, and its outcome is delivered back
// to the same VM with grpcReceive (OK) or grpcClose (the failure's status and
// message, which the module reads with proxy_get_status and judges by its
// fail policy).
//
// Answers arrive later, from a promise: by then the VM may have trapped (and
// been replaced by the embedder) or the root context may be gone. Such an
// answer is dropped and reported to `onUndelivered`; nothing is ever thrown
// into the event loop. A transport that breaks its never-reject contract is
// answered as an INTERNAL failure, so the module's request does not wait
// forever and its fail policy decides.

import type { ProxyWasmVm } from "../wasm/abi_host.ts";
import type { GrpcCall } from "../wasm/abi_types.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";
import type { HubCallResult, HubCaller } from "./transport.ts";

/**
 * The root property a VM wired to the HubTransport must answer
 * (HostEnvironment.rootProperties): `mesh.host_retries` = true tells the
 * module that the transport executes the NetworkFailPolicy's retries, so it
 * sends the policy as `x-mesh-retry-policy` metadata and does not retry on
 * its own timer as well.
 */
export const hostRetriesProperty = (path: string[]): Uint8Array | undefined =>
  path.length === 2 && path[0] === "mesh" && path[1] === "host_retries" ? Uint8Array.of(1) : undefined;

/** The part of ProxyWasmVm that receives hub answers. */
export type AnswerSink = Pick<ProxyWasmVm, "failed" | "grpcReceive" | "grpcClose">;

/** Why an answer did not reach the module. */
export interface Undelivered {
  call: GrpcCall;
  result?: HubCallResult;
  /** `vm-failed`: the VM trapped earlier; `callback-threw`: delivering threw (a trap, a root that is gone). */
  reason: "vm-failed" | "callback-threw";
  error?: unknown;
}

export interface ConnectOptions {
  /** Told about every answer that could not be delivered. Must not throw. */
  onUndelivered?: (u: Undelivered) => void;
}

/**
 * Returns a `HostEnvironment.grpcCall` that runs each call on `transport`
 * and answers `vm` when it settles. The VM needs the function at
 * construction, so bind it late:
 *
 * @example
 * let grpcCall: (call: GrpcCall) => void = () => {};
 * const vm = new ProxyWasmVm(RELEASE_WASM, { log, now, tickPeriod, grpcCall: (c) => grpcCall(c), rootProperties: hostRetriesProperty });
 * grpcCall = connectVm(vm, transport);
 */
export function connectVm(vm: AnswerSink, transport: HubCaller, options: ConnectOptions = {}): (call: GrpcCall) => void {
  const undelivered = (u: Undelivered) => {
    try {
      options.onUndelivered?.(u);
    } catch {
      // an observer's bug must not escape into the event loop
    }
  };
  const deliver = (call: GrpcCall, result: HubCallResult) => {
    if (vm.failed) return undelivered({ call, result, reason: "vm-failed" });
    try {
      if (result.ok) vm.grpcReceive(call.rootId, call.token, result.message);
      else vm.grpcClose(call.rootId, call.token, result.code, result.message);
    } catch (error) {
      undelivered({ call, result, reason: "callback-threw", error });
    }
  };
  return (call: GrpcCall) => {
    let pending: Promise<HubCallResult>;
    try {
      pending = transport.call(call);
    } catch (error) {
      // Answer asynchronously even so: the module is still inside proxy_grpc_call.
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => deliver(call, result),
      (error) =>
        deliver(call, { ok: false, code: GRPC_CODES.INTERNAL, message: `hub transport failed: ${(error as Error)?.message ?? String(error)}`, attempts: 0 }),
    );
  };
}
