import * as grpc from "@grpc/grpc-js";
import { envoyType } from "../../../host/wire/envoy_protos.ts";

// An ADS client spoken by hand over a real gRPC stream: what it sends is
// exactly what a test writes (subscriptions, ACKs, NACKs, stale nonces), and
// every response is kept in order.

const identity = (b: Buffer) => b;
const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";

export interface AdsResponse {
  version_info: string;
  nonce: string;
  type_url: string;
  resources: Array<{ type_url: string; value: Uint8Array }>;
}

export const SIDECAR_NODE = { id: "sidecar~10.0.0.1~a.foo~foo.svc.cluster.local" };

export class RawAdsClient {
  private readonly received: AdsResponse[] = [];
  private readonly waiting: Array<(r: AdsResponse) => void> = [];
  readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  constructor(
    client: grpc.Client,
    private readonly node: Record<string, unknown> = SIDECAR_NODE,
  ) {
    const response = envoyType("envoy.service.discovery.v3.DiscoveryResponse");
    this.stream = client.makeBidiStreamRequest(ADS, identity, identity);
    this.stream.on("data", (b: Buffer) => {
      const r = response.toObject(response.decode(b), { defaults: true }) as AdsResponse;
      const w = this.waiting.shift();
      if (w) w(r);
      else this.received.push(r);
    });
    this.stream.on("error", () => {});
  }
  send(fields: Record<string, unknown>): void {
    const request = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
    this.stream.write(Buffer.from(request.encode(request.fromObject({ node: this.node, ...fields })).finish()));
  }
  /** ACKs a response, keeping the names subscribed. */
  ack(r: AdsResponse, names: readonly string[] = []): void {
    this.send({ type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce, resource_names: [...names] });
  }
  next(): Promise<AdsResponse> {
    const r = this.received.shift();
    if (r) return Promise.resolve(r);
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  pending(): number {
    return this.received.length;
  }
}
