import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { ReflectionService } from "@grpc/reflection";
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
  addLazyReflection(server, async () => {
    const { ReflectionService } = await import("@grpc/reflection");
    return new ReflectionService(loadSync([...options.protoFiles, healthProtoPath], { includeDirs: [PROTO_DIR, ...(options.includeDirs ?? []), healthIncludeDir] }), {
      services: [...options.services, HEALTH_SERVICE],
    });
  });
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

/** The services of @grpc/reflection: their .proto files (in its package) and the loader options it reads them with. */
const REFLECTION_SERVICES = [
  { name: "grpc.reflection.v1.ServerReflection", file: "grpc/reflection/v1/reflection.proto" },
  { name: "grpc.reflection.v1alpha.ServerReflection", file: "grpc/reflection/v1alpha/reflection.proto" },
];
const REFLECTION_LOADER_OPTIONS = { longs: String, enums: String, bytes: Array, defaults: true, oneofs: true };

/**
 * Server reflection, built on its first request: loading @grpc/reflection
 * (with its own copies of protobufjs and proto-loader) and indexing a
 * daemon's .proto files (disco-discovery's are Envoy's whole API) cost more
 * CPU than the rest of a daemon's start, and few clients ever ask. The
 * services are registered at once, their definitions read from the package's
 * own .proto files with the options it reads them with (so requests decode
 * to the objects it expects); the first call builds the real service and
 * every call is answered by it.
 */
function addLazyReflection(server: grpc.Server, build: () => Promise<ReflectionService>): void {
  const protoDir = join(dirname(createRequire(import.meta.url).resolve("@grpc/reflection")), "..", "proto");
  const definitions = loadSync(
    REFLECTION_SERVICES.map((r) => r.file),
    { includeDirs: [protoDir], ...REFLECTION_LOADER_OPTIONS },
  );
  let real: Promise<Map<string, grpc.UntypedServiceImplementation>> | undefined;
  for (const { name } of REFLECTION_SERVICES) {
    const definition = definitions[name] as grpc.ServiceDefinition;
    const delegates: grpc.UntypedServiceImplementation = {};
    for (const method of Object.keys(definition)) {
      delegates[method] = ((call: grpc.ServerDuplexStream<unknown, unknown>) => {
        if (!real) {
          real = build().then((service) => {
            const byName = new Map<string, grpc.UntypedServiceImplementation>();
            for (const r of recordServices((s) => service.addToServer(s))) byName.set(Object.values(r.definition)[0].path.split("/")[1], r.implementation);
            return byName;
          });
          real.catch(() => (real = undefined)); // a failed build is tried again by the next call
        }
        // Messages that arrive meanwhile wait in the stream until the real handler reads them.
        real.then(
          (byName) => (byName.get(name)![method] as (call: grpc.ServerDuplexStream<unknown, unknown>) => void)(call),
          (e: Error) => call.emit("error", { code: GRPC_INTERNAL, details: `server reflection: ${e.message}` }),
        );
      }) as grpc.UntypedHandleCall;
    }
    server.addService(definition, delegates);
  }
}

/** gRPC status INTERNAL. */
const GRPC_INTERNAL = 13;
