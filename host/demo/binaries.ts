import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Where the built programs are. The same from host/demo/ (tests) and from
// build/out/ (the bundled demo): two levels up is the repository.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const HUBS_BIN = join(ROOT, "build", "out", "hubs.mjs");
export const AGENT_BIN = join(ROOT, "build", "out", "disco-agent.mjs");
export const MESH_CA_BIN = join(ROOT, "build", "out", "mesh_ca.mjs");
export const DEMO_DIR = join(ROOT, "host", "demo");
export const DISCOVERY_BIN = join(ROOT, "build", "out", "disco-discovery.mjs");
export const MESHCTL_BIN = join(ROOT, "build", "out", "meshctl.mjs");

/** The ports in disco-agent's listening line. */
export interface SidecarListening {
  inbound: number;
  outbound: number;
  admin: number;
  /** -1 without a TCP listener. */
  tcp: number;
}
