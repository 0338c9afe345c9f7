import { deltaDiscoveryResponse, discoveryResponse } from "./ads_wire.ts";
import type { ProxyNode } from "./ads_types.ts";
import type { StreamWriter } from "./ads_flow.ts";
import type { Subscription } from "./ads_subscription.ts";

export class Connection {
  readonly subscriptions = new Map<string, Subscription>();
  readonly connectedAt = new Date();
  node: ProxyNode | undefined;
  /** When the change this proxy has not yet fully answered was made (performance.now()), for convergence. */
  changedAt: number | undefined;
  private nonce = 0;

  constructor(
    readonly id: string,
    /** Writes this stream's responses within the budget all streams share (host/discovery/ads_flow.ts): assembled when written. */
    private readonly writer: StreamWriter,
    readonly identity: ProxyNode["identity"],
    /** An incremental (Delta) stream. */
    readonly delta = false,
  ) {}

  /** The stream closed: nothing more is written to it. */
  close(): void {
    this.writer.close();
  }

  private nextNonce(config: number | undefined): string {
    return config === undefined ? String(++this.nonce) : `${config}-${++this.nonce}`;
  }

  /**
   * One incremental response: the resources that changed (pre-encoded, each
   * with its version: ads_wire.ts; `resources` gives their bytes when the
   * response is written) and the names removed. Its nonce.
   */
  sendDelta(
    type: string,
    version: string,
    resources: () => Uint8Array,
    removed: readonly string[],
    identifier: string | undefined,
    config: number | undefined,
  ): string {
    const nonce = this.nextNonce(config);
    this.writer.write(() => deltaDiscoveryResponse(version, type, nonce, resources(), removed, identifier), type);
    return nonce;
  }

  /** One state-of-the-world response: every resource of the subscription (pre-encoded and shared: ads_wire.ts). Its nonce. */
  send(type: string, version: string, resources: Uint8Array, identifier: string | undefined, config: number | undefined): string {
    const nonce = this.nextNonce(config);
    this.writer.write(() => discoveryResponse(version, type, nonce, resources, identifier), type);
    return nonce;
  }
}

/** google.protobuf.Struct (protobufjs object form) as plain JSON. */
export function structToJson(struct: unknown): Record<string, unknown> {
  const fields = (struct as { fields?: Record<string, unknown> } | undefined)?.fields ?? {};
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, valueToJson(v)]));
}

// protobufjs defines the well-known types itself, with camelCase field names.
function valueToJson(v: unknown): unknown {
  const value = v as Record<string, unknown>;
  if ("stringValue" in value) return value.stringValue;
  if ("numberValue" in value) return value.numberValue;
  if ("boolValue" in value) return value.boolValue;
  if ("structValue" in value) return structToJson(value.structValue);
  if ("listValue" in value) return ((value.listValue as { values?: unknown[] }).values ?? []).map(valueToJson);
  return null;
}
