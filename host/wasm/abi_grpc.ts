import { type GrpcCall, WasmStatus } from "./abi_types.ts";
import type { ModuleMemory } from "./abi_memory.ts";
import type { ContextState, HostEnvironment } from "./abi_contexts.ts";
import { decodePairs } from "./pairs.ts";
import { copyWithFrameRoom } from "../wire/grpc_frame.ts";

/**
 * gRPC calls: the module's unary calls handed to the embedder (answered
 * later through the VM's grpcReceive or grpcClose), cancelled, and the last
 * call's status read back.
 */
export function grpcImports(state: ContextState, memory: ModuleMemory, env: HostEnvironment) {
  return {
    proxy_grpc_call(
      cPtr: number,
      cLen: number,
      sPtr: number,
      sLen: number,
      mPtr: number,
      mLen: number,
      mdPtr: number,
      mdLen: number,
      msgPtr: number,
      msgLen: number,
      timeoutMs: number,
      outToken: number,
    ) {
      const token = state.nextToken++;
      const call: GrpcCall = {
        token,
        rootId: state.rootOf(state.current),
        cluster: memory.text(cPtr, cLen),
        service: memory.text(sPtr, sLen),
        method: memory.text(mPtr, mLen),
        metadata: mdLen > 0 ? decodePairs(memory.bytesAt(mdPtr, mdLen)) : [],
        // A copy (Buffer#slice would be a view): the embedder sends it later, when the module has reused that memory.
        // Made with room for gRPC's prefix, so the hub transport frames it without a second copy.
        message: copyWithFrameRoom(memory.bytesAt(msgPtr, msgLen)),
        timeoutMs,
      };
      memory.view.setUint32(outToken, token, true);
      env.grpcCall(call);
      return WasmStatus.Ok;
    },
    proxy_grpc_cancel(token: number) {
      env.grpcCancel?.(token);
      return WasmStatus.Ok;
    },
    proxy_grpc_close() {
      return WasmStatus.Ok;
    },
    proxy_get_status(outCode: number, outPtr: number, outLen: number) {
      memory.view.setUint32(outCode, state.lastStatus.code, true);
      return memory.giveValue(state.lastStatus.message, outPtr, outLen);
    },
  };
}
