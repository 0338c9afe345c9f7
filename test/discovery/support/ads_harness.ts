import * as grpc from "@grpc/grpc-js";
import { type AdsObserver, AggregatedDiscoveryService, type ProxyNode, type PushPolicy } from "../../../host/discovery/ads_server.ts";
import type { ResourceSet } from "../../../host/discovery/resource_set.ts";
import { shutdownGrpcServer } from "../../../host/wire/raw_grpc.ts";

/** An AggregatedDiscoveryService alone on a loopback gRPC server, with a client channel to it: the protocol without a daemon. */
export interface AdsHarness {
  ads: AggregatedDiscoveryService;
  client: grpc.Client;
  /** The server's address (`127.0.0.1:<port>`). */
  address: string;
  stop(): Promise<void>;
}

export async function startAdsHarness(resourcesFor: (node: ProxyNode) => ResourceSet, observer: AdsObserver, policy?: PushPolicy): Promise<AdsHarness> {
  const ads = new AggregatedDiscoveryService(resourcesFor, observer, policy);
  const server = new grpc.Server();
  ads.addTo(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    ads,
    client,
    address: `127.0.0.1:${port}`,
    stop: async () => {
      client.close();
      await shutdownGrpcServer(server, 1000);
    },
  };
}
