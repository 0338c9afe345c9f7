import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type * as grpc from "@grpc/grpc-js";
import { loadSync, type Options as LoaderOptions } from "@grpc/proto-loader";
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

const packageDir = (name: string) => dirname(createRequire(import.meta.url).resolve(name));

/** grpc-health-check's .proto files and the loader options it reads them with. */
const HEALTH_INCLUDE_DIR = join(packageDir("grpc-health-check"), "..", "..", "proto");
const HEALTH_PROTO = "health/v1/health.proto";
const HEALTH_LOADER_OPTIONS: LoaderOptions = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/** @grpc/reflection's services, their .proto files (in its package) and the loader options it reads them with. */
const REFLECTION_SERVICES = [
  { name: "grpc.reflection.v1.ServerReflection", file: "grpc/reflection/v1/reflection.proto" },
  { name: "grpc.reflection.v1alpha.ServerReflection", file: "grpc/reflection/v1alpha/reflection.proto" },
];
const REFLECTION_LOADER_OPTIONS: LoaderOptions = { longs: String, enums: String, bytes: Array, defaults: true, oneofs: true };

/**
 * Adds `grpc.health.v1.Health` (grpc-health-check) and server reflection
 * (`grpc.reflection.v1` and `v1alpha`, @grpc/reflection) to a daemon's gRPC
 * server. Every service starts NOT_SERVING; the daemon calls
 * `setServing(true)` once it is ready and `setServing(false)` when it starts
 * draining (Watch streams hear of both). Names unknown to the server answer
 * NOT_FOUND, as the health protocol says.
 *
 * Both packages are loaded on the first call to their services
 * (addLazyServices): each brings its own copies of protobufjs and
 * proto-loader, and reflection indexes the daemon's .proto files
 * (disco-discovery's are Envoy's whole API); loaded at start they cost
 * every hubs and mesh_ca start about a quarter of a second of CPU
 * (docs/benchmarks.md "npm test"), and most daemons are never asked.
 */
export function addGrpcIntrospection(server: grpc.Server, options: GrpcIntrospectionOptions): ServingHealth {
  const names = ["", ...options.services];
  const statuses = new Map<string, "SERVING" | "NOT_SERVING">(names.map((n) => [n, "NOT_SERVING"]));
  let health: import("grpc-health-check").HealthImplementation | undefined;
  const healthDefinitions = loadSync(HEALTH_PROTO, { includeDirs: [HEALTH_INCLUDE_DIR], ...HEALTH_LOADER_OPTIONS });
  addLazyServices(server, [[HEALTH_SERVICE, healthDefinitions[HEALTH_SERVICE] as grpc.ServiceDefinition]], "health", async () => {
    const { HealthImplementation } = await import("grpc-health-check");
    health ??= new HealthImplementation(Object.fromEntries(statuses));
    return (s) => health!.addToServer(s);
  });
  const reflectionDefinitions = loadSync(
    REFLECTION_SERVICES.map((r) => r.file),
    { includeDirs: [join(packageDir("@grpc/reflection"), "..", "proto")], ...REFLECTION_LOADER_OPTIONS },
  );
  addLazyServices(
    server,
    REFLECTION_SERVICES.map((r) => [r.name, reflectionDefinitions[r.name] as grpc.ServiceDefinition]),
    "server reflection",
    async () => {
      const { ReflectionService } = await import("@grpc/reflection");
      const reflection = new ReflectionService(
        loadSync([...options.protoFiles, join(HEALTH_INCLUDE_DIR, HEALTH_PROTO)], {
          includeDirs: [PROTO_DIR, ...(options.includeDirs ?? []), HEALTH_INCLUDE_DIR],
        }),
        {
          services: [...options.services, HEALTH_SERVICE],
        },
      );
      return (s) => reflection.addToServer(s);
    },
  );
  return {
    setServing(serving) {
      for (const n of names) {
        statuses.set(n, serving ? "SERVING" : "NOT_SERVING");
        health?.setStatus(n, serving ? "SERVING" : "NOT_SERVING");
      }
    },
  };
}

type Registered = Array<{ definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }>;

/** The services `register` adds to a server, recorded instead of served. */
function recordServices(register: (server: grpc.Server) => void): Registered {
  const registered: Registered = [];
  register({
    addService: (definition: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation) => void registered.push({ definition, implementation }),
  } as unknown as grpc.Server);
  return registered;
}

/** A service's full name (`grpc.health.v1.Health`), from its first method's path. */
const serviceNameOf = (definition: grpc.ServiceDefinition) => Object.values(definition)[0].path.split("/")[1];

/**
 * Registers services now and builds their implementation on the first call:
 * `definitions` are the services' definitions, read by our proto-loader from
 * the implementing package's own .proto files with the options it reads them
 * with (so requests decode to the objects it expects); `build` loads the
 * package and returns what registers its services on a server. Every call is
 * answered by the built implementation; messages that arrive meanwhile wait
 * in the call's stream. A failed build fails the call (INTERNAL) and is tried
 * again by the next one.
 */
function addLazyServices(
  server: grpc.Server,
  definitions: ReadonlyArray<readonly [string, grpc.ServiceDefinition]>,
  what: string,
  build: () => Promise<(server: grpc.Server) => void>,
): void {
  let real: Promise<Map<string, grpc.UntypedServiceImplementation>> | undefined;
  const built = () => {
    if (!real) {
      real = build().then((register) => new Map(recordServices(register).map((r) => [serviceNameOf(r.definition), r.implementation])));
      real.catch(() => (real = undefined));
    }
    return real;
  };
  for (const [name, definition] of definitions) {
    const delegates: grpc.UntypedServiceImplementation = {};
    for (const [method, attrs] of Object.entries(definition)) {
      delegates[method] = ((...args: unknown[]) => {
        built().then(
          (byName) => {
            const implementation = byName.get(name)!;
            // A package's implementation may name its methods as the .proto does (Check) or in camel case (check).
            (implementation[method] ?? implementation[attrs.originalName as string])(...(args as [never, never]));
          },
          (e: Error) => {
            const error = { code: GRPC_INTERNAL, details: `${what}: ${e.message}` };
            const [call, callback] = args as [NodeJS.EventEmitter, unknown];
            if (typeof callback === "function") callback(error);
            else call.emit("error", error);
          },
        );
      }) as grpc.UntypedHandleCall;
    }
    server.addService(definition, delegates);
  }
}

/** gRPC status INTERNAL. */
const GRPC_INTERNAL = 13;
