import { dirname, join } from "node:path";
import type * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { HealthImplementation, protoPath as healthProtoPath } from "grpc-health-check";
import { PROTO_DIR } from "./protos.ts";

/** The standard services every gRPC daemon serves besides its own. */
export const HEALTH_SERVICE = "grpc.health.v1.Health";

export interface GrpcIntrospectionOptions {
  /** Fully-qualified names of the daemon's own services, e.g. `mesh.hub.v1.Hub`. */
  services: readonly string[];
  /** Their .proto files, relative to proto/ or to `includeDirs` (e.g. `mesh/hub/v1/hub.proto`), for reflection. */
  protoFiles: readonly string[];
  /** Where else .proto files and their imports are found (Envoy's API for disco-discovery). */
  includeDirs?: readonly string[];
}

/** What a daemon tells the health service as its readiness changes. */
export interface ServingHealth {
  /** SERVING (true) or NOT_SERVING (false) for the server as a whole (`""`) and each of its services. */
  setServing(serving: boolean): void;
}

/**
 * Adds `grpc.health.v1.Health` (grpc-health-check) and server reflection
 * (`grpc.reflection.v1` and `v1alpha`, @grpc/reflection) to a daemon's gRPC
 * server. Every service starts NOT_SERVING; the daemon calls
 * `setServing(true)` once it is ready and `setServing(false)` when it starts
 * draining (Watch streams hear of both). Names unknown to the server answer
 * NOT_FOUND, as the health protocol says.
 */
export function addGrpcIntrospection(server: grpc.Server, options: GrpcIntrospectionOptions): ServingHealth {
  const names = ["", ...options.services];
  const health = new HealthImplementation(Object.fromEntries(names.map((n) => [n, "NOT_SERVING" as const])));
  health.addToServer(server);
  const definition = loadSync([...options.protoFiles, healthProtoPath], {
    includeDirs: [PROTO_DIR, ...(options.includeDirs ?? []), join(dirname(healthProtoPath), "..", "..")],
  });
  new ReflectionService(definition, { services: [...options.services, HEALTH_SERVICE] }).addToServer(server);
  return {
    setServing(serving) {
      for (const n of names) health.setStatus(n, serving ? "SERVING" : "NOT_SERVING");
    },
  };
}
