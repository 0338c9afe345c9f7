import type * as grpc from "@grpc/grpc-js";
import { deltaDiscoveryResponse, discoveryResponse } from "./ads_wire.ts";
import type { ProxyNode } from "./ads_types.ts";
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
    private readonly call: grpc.ServerDuplexStream<Buffer, Buffer>,
    readonly identity: ProxyNode["identity"],
    /** An incremental (Delta) stream. */
    readonly delta = false,
  ) {}

  private nextNonce(config: number | undefined): string {
    return config === undefined ? String(++this.nonce) : `${config}-${++this.nonce}`;
  }

  /** One incremental response: the resources that changed (pre-encoded, each with its version: ads_wire.ts) and the names removed. */
  sendDelta(
    type: string,
    version: string,
    resources: Uint8Array,
    removed: readonly string[],
    identifier: string | undefined,
    config: number | undefined,
  ): string {
    const nonce = this.nextNonce(config);
    this.call.write(deltaDiscoveryResponse(version, type, nonce, resources, removed, identifier));
    return nonce;
  }

  /** One state-of-the-world response: every resource of the subscription (pre-encoded: ads_wire.ts). */
  send(type: string, version: string, resources: Uint8Array, identifier: string | undefined, config: number | undefined): string {
    const nonce = this.nextNonce(config);
    this.call.write(discoveryResponse(version, type, nonce, resources, identifier));
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
