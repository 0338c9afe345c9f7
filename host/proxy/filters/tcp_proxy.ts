import { type Server, type Socket, connect, createServer } from "node:net";
import { type PropertyResolver, propertyValue } from "../../wasm/abi_host.ts";
import type { ConnectionUpdate, FilterHost } from "./filter_host.ts";
import type { SafetyNet } from "../../daemon/safety_net.ts";

export interface TcpProxyOptions {
  filter: FilterHost;
  upstream: { host: string; port: number };
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /** The process's safety net: an uncaught error in a connection's work closes that connection only. */
  safetyNet?: Pick<SafetyNet, "run">;
}

/** Counters of the TCP listener, for /stats. */
export interface TcpStats {
  connections: number;
  denied: number;
  active: number;
}

/**
 * A TCP listener that runs each connection through the filter's TCP mode
 * (TcpClientConfig): the first client bytes wait for the hub's check (with
 * the connection quota); a denial closes the connection without forwarding
 * anything; reports go out while the connection lives and once at close.
 */
export class TcpProxy {
  readonly server: Server;
  readonly stats: TcpStats = { connections: 0, denied: 0, active: 0 };

  constructor(private readonly options: TcpProxyOptions) {
    // Nagle's algorithm off on both sides of a proxied connection, as Envoy sets TCP_NODELAY.
    this.server = createServer({ noDelay: true }, (client) => {
      const net = options.safetyNet;
      if (net) net.run({ listener: "tcp", end: () => client.destroy() }, () => this.handle(client));
      else this.handle(client);
    });
  }

  private handle(client: Socket): void {
    const o = this.options;
    this.stats.connections++;
    this.stats.active++;
    const props = new Map<string, Uint8Array>([
      ["source.address", propertyValue.string(`${client.remoteAddress}:${client.remotePort}`)],
      ["destination.address", propertyValue.string(`${client.localAddress}:${client.localPort}`)],
      ["connection.mtls", propertyValue.bool(false)],
    ]);
    const resolver: PropertyResolver = (path) => props.get(path.join("."));
    const upstream = connect({ port: o.upstream.port, host: o.upstream.host, noDelay: true });
    let finished = false;
    const finish = (side: "client" | "server") => {
      if (finished) return;
      finished = true;
      this.stats.active--;
      if (id !== undefined) o.filter.closeConnection(id, side);
      client.destroy();
      upstream.destroy();
    };
    const apply = (update: ConnectionUpdate) => {
      if (update.forward.length > 0) upstream.write(update.forward);
      if (update.close) {
        this.stats.denied++;
        finish("client");
      }
    };
    const id = o.filter.openConnection(resolver, apply);
    client.on("data", (chunk: Buffer) => {
      if (id === undefined) upstream.write(chunk);
      else apply(o.filter.clientData(id, chunk, false));
    });
    upstream.on("data", (chunk: Buffer) => {
      props.set("upstream.address", propertyValue.string(`${o.upstream.host}:${o.upstream.port}`));
      const out = id === undefined ? chunk : o.filter.serverData(id, chunk, false);
      if (out.length > 0) client.write(out);
    });
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    client.on("close", () => finish("client"));
    upstream.on("close", () => finish("server"));
    client.on("error", () => finish("client"));
    upstream.on("error", (e) => {
      o.onLog("warn", `tcp upstream ${o.upstream.host}:${o.upstream.port}: ${e.message}`);
      finish("server");
    });
  }
}
