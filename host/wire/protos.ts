import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/** The project's .proto files, shared by the filter, the Node host and the hub server. */
export const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "proto");

const FILES = ["mesh/hub/v1/hub.proto", "mesh/filter/v1/evaluation.proto", "mesh/config/v1/config.proto"];

let loaded: protobuf.Root | undefined;

/**
 * The message types of proto/, loaded once. Imports resolve against proto/
 * first, then protobufjs's bundled google/protobuf definitions.
 */
export function protoRoot(): protobuf.Root {
  if (loaded) return loaded;
  const root = new protobuf.Root();
  const bundled = root.resolvePath;
  root.resolvePath = (origin, target) => {
    const local = join(PROTO_DIR, target);
    return existsSync(local) ? local : bundled(origin, target);
  };
  root.loadSync(
    FILES.map((f) => join(PROTO_DIR, f)),
    { keepCase: false },
  );
  root.resolveAll();
  loaded = root;
  return root;
}

export function messageType(name: string): protobuf.Type {
  return protoRoot().lookupType(name);
}
