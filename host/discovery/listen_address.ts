/**
 * A listener address flag as upstream writes them: `:15010` (every address),
 * `127.0.0.1:15010`, `[::1]:15010`; port 0 picks a free port; an empty value
 * disables the listener (undefined).
 */
export interface ListenAddress {
  /** Undefined: every address. */
  readonly host?: string;
  readonly port: number;
}

export function parseListenAddress(text: string): ListenAddress | undefined {
  if (text === "") return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  if (!m) throw new Error(`expected HOST:PORT or :PORT (empty disables the listener), got ${JSON.stringify(text)}`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`port ${port} is outside 0..65535`);
  const host = m[1] ?? m[2];
  return { host: host === "" ? undefined : host, port };
}

/** `host:port` for gRPC's bind (every address is `0.0.0.0`, or `[::]`). */
export function grpcBindAddress(a: ListenAddress): string {
  const host = a.host ?? "0.0.0.0";
  return host.includes(":") ? `[${host}]:${a.port}` : `${host}:${a.port}`;
}

/** Where a client on this machine reaches a listener: every address (`:8080`, `0.0.0.0`, `[::]`) is reached on loopback. */
export function dialAddress(a: ListenAddress): { host: string; port: number } {
  const host = a.host === undefined || a.host === "0.0.0.0" ? "127.0.0.1" : a.host === "::" ? "::1" : a.host;
  return { host, port: a.port };
}
