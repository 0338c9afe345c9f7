import * as grpc from "@grpc/grpc-js";
import { DISCOVERY_BIN } from "../../../host/demo/binaries.ts";
import { type Daemon, startDaemon } from "../../support/processes.ts";
import { SIDE_LISTENERS_OFF } from "./daemon_args.ts";

/** The addresses disco-discovery prints once it listens. */
export interface DiscoveryListening {
  grpc: string;
  http: string;
  monitoring: string;
}

/**
 * disco-discovery daemons over a test's folder, every listener on a loopback
 * port of its own (tests run in parallel), pushes debounced 10 ms unless the
 * environment given says otherwise, each with a plain-text gRPC channel;
 * `stop` closes them all.
 */
export class LoopbackDiscoveries {
  private readonly daemons: Daemon<DiscoveryListening>[] = [];
  private readonly channels: grpc.Client[] = [];

  async start(dir: string, env: Record<string, string>): Promise<{ d: Daemon<DiscoveryListening>; channel: grpc.Client }> {
    const args = [
      "discovery",
      "--configDir",
      dir,
      "--grpcAddr",
      "127.0.0.1:0",
      "--httpAddr",
      "127.0.0.1:0",
      ...SIDE_LISTENERS_OFF,
      "--monitoringAddr",
      "127.0.0.1:0",
    ];
    const d = await startDaemon<DiscoveryListening>(DISCOVERY_BIN, args, "disco-discovery listening: ", undefined, {
      ...process.env,
      DISCO_DEBOUNCE_AFTER: "10ms",
      ...env,
    });
    this.daemons.push(d);
    const channel = new grpc.Client(d.listening.grpc, grpc.credentials.createInsecure());
    this.channels.push(channel);
    return { d, channel };
  }

  async stop(): Promise<void> {
    for (const c of this.channels) c.close();
    await Promise.all(this.daemons.map((d) => d.stop()));
  }
}
