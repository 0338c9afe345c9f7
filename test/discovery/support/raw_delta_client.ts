import type * as grpc from "@grpc/grpc-js";
import { envoyType } from "../../../host/wire/envoy_protos.ts";

// An incremental (DeltaAggregatedResources) client spoken by hand over a real
// gRPC stream with Envoy's v3 messages: what it sends is exactly what a test
// writes, and every response is kept in order.

const DELTA = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";
const identity = (b: Buffer) => b;

export interface DeltaResponse {
  system_version_info: string;
  type_url: string;
  nonce: string;
  resources: Array<{ name: string; version: string; resource: { type_url: string; value: Uint8Array } }>;
  removed_resources: string[];
}

export class RawDeltaClient {
  private readonly received: DeltaResponse[] = [];
  private readonly waiting: Array<(r: DeltaResponse) => void> = [];
  readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  constructor(
    client: grpc.Client,
    private readonly node: Record<string, unknown>,
  ) {
    const response = envoyType("envoy.service.discovery.v3.DeltaDiscoveryResponse");
    this.stream = client.makeBidiStreamRequest(DELTA, identity, identity);
    this.stream.on("data", (b: Buffer) => {
      const r = response.toObject(response.decode(b), { defaults: true }) as DeltaResponse;
      const w = this.waiting.shift();
      if (w) w(r);
      else this.received.push(r);
    });
    this.stream.on("error", () => {});
  }
  send(fields: Record<string, unknown>): void {
    const request = envoyType("envoy.service.discovery.v3.DeltaDiscoveryRequest");
    this.stream.write(Buffer.from(request.encode(request.fromObject({ node: this.node, ...fields })).finish()));
  }
  ack(r: DeltaResponse): void {
    this.send({ type_url: r.type_url, response_nonce: r.nonce });
  }
  next(): Promise<DeltaResponse> {
    const r = this.received.shift();
    return r ? Promise.resolve(r) : new Promise((resolve) => this.waiting.push(resolve));
  }
  pending(): number {
    return this.received.length;
  }
  end(): void {
    this.stream.end();
  }
}
