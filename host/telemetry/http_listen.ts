import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Listens and resolves with the bound address (`host:port`, IPv6 in brackets) and port; port 0 picks a free one. */
export function listen(server: Server, port: number, host?: string): Promise<{ address: string; port: number }> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const a = server.address() as AddressInfo;
      resolve({ address: a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`, port: a.port });
    });
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
