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
  addLazyReflection(server, () =>
    new ReflectionService(loadSync([...options.protoFiles, healthProtoPath], { includeDirs: [PROTO_DIR, ...(options.includeDirs ?? []), healthIncludeDir] }), {
      services: [...options.services, HEALTH_SERVICE],
    }),
  );
  return {
    setServing(serving) {
      for (const n of names) health.setStatus(n, serving ? "SERVING" : "NOT_SERVING");
    },
  };
}

const healthIncludeDir = join(dirname(healthProtoPath), "..", "..");

type Registered = Array<{ definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }>;

/** The services `register` adds to a server, recorded instead of served. */
function recordServices(register: (server: grpc.Server) => void): Registered {
  const registered: Registered = [];
  register({ addService: (definition: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation) => void registered.push({ definition, implementation }) } as unknown as grpc.Server);
  return registered;
}

/**
 * Server reflection, built on its first request: indexing a daemon's .proto
 * files (disco-discovery's are Envoy's whole API) costs more CPU than the
 * rest of its start, and few clients ever ask. The services are registered
 * at once (their shape comes from a reflection service over the health
 * proto alone); the first call builds the real one and every call is
 * answered by it.
 */
function addLazyReflection(server: grpc.Server, build: () => ReflectionService): void {
  const shapes = recordServices((s) => new ReflectionService(loadSync([healthProtoPath], { includeDirs: [healthIncludeDir] }), { services: [HEALTH_SERVICE] }).addToServer(s));
  let real: Registered | undefined;
  shapes.forEach(({ definition, implementation }, i) => {
    const delegates: grpc.UntypedServiceImplementation = {};
    for (const method of Object.keys(implementation)) {
      delegates[method] = ((call: grpc.ServerDuplexStream<unknown, unknown>) => {
        try {
          real ??= recordServices((s) => build().addToServer(s));
        } catch (e) {
          call.emit("error", { code: GRPC_INTERNAL, details: `server reflection: ${(e as Error).message}` });
          return;
        }
        (real[i].implementation[method] as (call: grpc.ServerDuplexStream<unknown, unknown>) => void)(call);
      }) as grpc.UntypedHandleCall;
    }
    server.addService(definition, delegates);
  });
}

/** gRPC status INTERNAL. */
const GRPC_INTERNAL = 13;
