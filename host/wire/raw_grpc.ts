import type * as grpc from "@grpc/grpc-js";

const identity = (b: Buffer): Buffer => b;

/**
 * A unary gRPC method on raw bytes: messages pass through grpc-js unchanged
 * and are decoded by the handler (so garbage becomes INVALID_ARGUMENT, never a
 * crash) or by the caller.
 */
export function rawUnaryMethod(path: string): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

/** Stops accepting calls and lets calls in flight finish, forcing the shutdown after `graceMs`. */
export function shutdownGrpcServer(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.forceShutdown(), graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
