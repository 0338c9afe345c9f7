import * as grpc from "@grpc/grpc-js";
import { ConfigError } from "../config/errors.ts";
import type { PatternChecks } from "../config/resources/hub_client.ts";
import { documentsFromResources } from "../discovery/config_distribution.ts";
import { CONFIG_DOCUMENT } from "../discovery/type_urls.ts";
import { envoyType } from "../wire/envoy_protos.ts";
import { type LoadedConfig, loadDocuments } from "../config/config_dir.ts";

/**
 * The sidecar's configuration from the control plane (`--discoveryAddress`):
 * an ADS stream subscribed to the mesh's configuration documents, applied
 * through the same decoder and the same `apply` as `--configDir`. A version
 * that does not decode is NACKed with the field path and the last good
 * configuration stays; a broken stream is reopened with backoff.
 */

const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const identity = (b: Buffer): Buffer => b;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

export interface XdsNode {
  id: string;
  cluster: string;
  metadata?: Record<string, string>;
}

export class XdsConfigSource {
  private client: grpc.Client | undefined;
  private stream: grpc.ClientDuplexStream<Buffer, Buffer> | undefined;
  private stopped = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private ackedVersion = "";
  private firstApplied: ((applied: boolean) => void) | undefined;

  constructor(
    private readonly address: string,
    private readonly node: XdsNode,
    private readonly checks: PatternChecks,
    /** The mesh's DNS domain the documents' short hosts resolve in (host/mesh/hosts.ts). */
    private readonly domain: string,
    private readonly apply: (config: LoadedConfig) => boolean,
    private readonly reject: (problem: string) => void,
    private readonly log: { info(m: string): void; warn(m: string): void },
    /** Asked again on each (re)connection: under mutual TLS, the current workload certificate. */
    private readonly credentials: () => grpc.ChannelCredentials = () => grpc.credentials.createInsecure(),
  ) {}

  /** Connects; resolves once the first configuration was received and applied. */
  start(): Promise<boolean> {
    const first = new Promise<boolean>((resolve) => (this.firstApplied = resolve));
    this.open();
    return first;
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.stream?.cancel();
    this.client?.close();
    this.firstApplied?.(false);
  }

  private open(): void {
    if (this.stopped) return;
    // A new channel per stream: a renewed certificate is presented on the next connection.
    this.client?.close();
    let credentials: grpc.ChannelCredentials;
    try {
      credentials = this.credentials();
    } catch (e) {
      this.log.warn(`control plane credentials: ${(e as Error).message}; retrying in ${this.retryMs} ms`);
      this.retryLater();
      return;
    }
    this.client = new grpc.Client(this.address, credentials);
    const stream = this.client.makeBidiStreamRequest(ADS_PATH, identity, identity);
    this.stream = stream;
    stream.on("data", (bytes: Buffer) => this.onResponse(bytes));
    const reopen = (why: string) => {
      if (this.stopped || this.stream !== stream) return;
      this.stream = undefined;
      this.log.warn(`control plane stream closed (${why}); reconnecting in ${this.retryMs} ms`);
      this.retryLater();
    };
    stream.on("error", (e: Error) => reopen(e.message));
    stream.on("end", () => reopen("ended by the server"));
    this.send({ type_url: CONFIG_DOCUMENT, version_info: this.ackedVersion });
  }

  private retryLater(): void {
    this.retryTimer = setTimeout(() => this.open(), this.retryMs);
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
  }

  private send(fields: Record<string, unknown>): void {
    const type = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
    const message = type.fromObject({
      node: { id: this.node.id, cluster: this.node.cluster, user_agent_name: "disco-agent", metadata: structOf(this.node.metadata ?? {}) },
      ...fields,
    });
    this.stream?.write(Buffer.from(type.encode(message).finish()));
  }

  private onResponse(bytes: Buffer): void {
    const type = envoyType("envoy.service.discovery.v3.DiscoveryResponse");
    const r = type.toObject(type.decode(bytes), { defaults: true }) as {
      version_info: string;
      nonce: string;
      type_url: string;
      resources: Array<{ type_url: string; value: Uint8Array }>;
    };
    if (r.type_url !== CONFIG_DOCUMENT) return;
    this.retryMs = RETRY_MIN_MS;
    let problem: string | undefined;
    try {
      const documents = documentsFromResources(r.resources);
      const files = [...new Set(documents.map((d) => d.file))];
      if (!this.apply(loadDocuments(documents, files, this.checks, this.domain))) problem = "the configuration was not applied";
    } catch (e) {
      if (!(e instanceof ConfigError) && !(e instanceof SyntaxError)) throw e;
      problem = e.message;
    }
    if (problem === undefined) {
      this.ackedVersion = r.version_info;
      this.log.info(`configuration version ${r.version_info} from ${this.address}: ${r.resources.length} document(s)`);
      this.send({ type_url: CONFIG_DOCUMENT, version_info: r.version_info, response_nonce: r.nonce });
      this.firstApplied?.(true);
      this.firstApplied = undefined;
    } else {
      this.reject(`control plane version ${r.version_info} refused: ${problem}; keeping the last good configuration`);
      this.send({ type_url: CONFIG_DOCUMENT, version_info: this.ackedVersion, response_nonce: r.nonce, error_detail: { code: 3, message: problem } });
    }
  }
}

/** google.protobuf.Struct of string values, in protobufjs's (camelCase) well-known-type form. */
function structOf(values: Record<string, string>): { fields: Record<string, { stringValue: string }> } {
  return { fields: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { stringValue: v }])) };
}
