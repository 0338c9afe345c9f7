import type { Server as NetServer } from "node:net";
import { bindNamed } from "../../daemon/bind.ts";

/**
 * Opening a listener, as the agent's start does for each of its ports: a
 * port that cannot be bound fails the start with a ListenerBindError naming
 * the flag that sets it and the address (`--inboundPort 127.0.0.1:15006:
 * cannot listen: address already in use`); the agent then exits 1.
 */

/** What is bound: the flag that names the port, where, and the server that takes the connections. */
export interface ListenerBinding {
  readonly flag: string;
  readonly address: string;
  readonly port: number;
  readonly server: NetServer;
}

/** Binds one listener; resolves with the bound port (port 0 picks a free one). */
export function bindListener(b: ListenerBinding): Promise<number> {
  return bindNamed(`${b.flag}`, `${b.address}:${b.port}`, listenOn(b.server, b.port, b.address));
}

function listenOn(server: NetServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}
