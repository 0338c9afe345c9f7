import { InvalidArgumentError } from "commander";
import { dialAddress, parseListenAddress } from "../../../discovery/listen_address.ts";
import { DEFAULT_HTTP_ADDR } from "../../../discovery/options.ts";

/** disco-discovery's debug address (its --httpAddr) when no `--debugAddress` is given. */
export const DEFAULT_DEBUG_TARGET = (): { host: string; port: number } => dialAddress(parseListenAddress(DEFAULT_HTTP_ADDR)!);

/** `--debugAddress HOST:PORT` (repeatable: every replica of disco-discovery), as `x wait`, `proxy-status` and `proxy-config` take it. */
export function debugAddress(value: string, previous: Array<{ host: string; port: number }> | undefined): Array<{ host: string; port: number }> {
  let address;
  try {
    address = parseListenAddress(value);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
  if (!address) throw new InvalidArgumentError("expected HOST:PORT or :PORT, got an empty value");
  return [...(previous ?? []), dialAddress(address)];
}
