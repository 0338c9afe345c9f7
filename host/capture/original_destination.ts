// The destination a captured connection was addressed to before the
// capture rules redirected it to the sidecar's listener: what Envoy's
// original_dst listener filter reads (getsockopt SO_ORIGINAL_DST), through
// the small addon of native/original_dst (built by `npm run build`).
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";

export interface OriginalDestination {
  readonly address: string;
  readonly port: number;
}

interface Addon {
  originalDestination(fd: number): OriginalDestination | undefined;
}

/**
 * The addon, found from this file's folder: host/capture/ in the source and
 * build/out/ in the bundles are both two levels below the package root.
 */
export const ADDON_PATH = fileURLToPath(new URL("../../native/original_dst/build/Release/original_dst.node", import.meta.url));

let addon: Addon | undefined;
let loadError: Error | undefined;

function load(): Addon | undefined {
  if (addon || loadError) return addon;
  if (process.platform !== "linux") {
    loadError = new Error(`original destinations are read on Linux only (this is ${process.platform})`);
    return undefined;
  }
  try {
    if (!existsSync(ADDON_PATH)) throw new Error(`${ADDON_PATH} is missing: run npm run build`);
    addon = createRequire(import.meta.url)(ADDON_PATH) as Addon;
  } catch (e) {
    loadError = new Error(`cannot load the original-destination addon: ${(e as Error).message}`);
  }
  return addon;
}

/**
 * Why original destinations cannot be read here (no addon, not Linux), or
 * undefined when they can. A sidecar says so once at start: every
 * connection is then handled as a direct one.
 */
export function originalDestinationUnavailable(): string | undefined {
  load();
  return loadError?.message;
}

/**
 * Where the connection was going before a REDIRECT rule sent it here, or
 * undefined when it was not redirected (its original destination is the
 * address it reached), when the socket is closed, or when the addon is not
 * available (see originalDestinationUnavailable).
 */
export function originalDestination(socket: Socket): OriginalDestination | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== "number" || fd < 0) return undefined;
  const found = load()?.originalDestination(fd);
  if (!found) return undefined;
  // Connection tracking knows every connection once nat rules exist; an untranslated one reports the address it reached.
  if (found.port === socket.localPort && sameAddress(found.address, socket.localAddress)) return undefined;
  return found;
}

/** `1.2.3.4` and `::ffff:1.2.3.4` are one address. */
function sameAddress(a: string, b: string | undefined): boolean {
  if (b === undefined) return false;
  const plain = (x: string) => (x.startsWith("::ffff:") && x.includes(".") ? x.slice(7) : x);
  return plain(a) === plain(b);
}
