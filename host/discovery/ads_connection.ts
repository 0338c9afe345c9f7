import type * as grpc from "@grpc/grpc-js";
import { envoyType } from "../wire/envoy_protos.ts";
import type { Resource, selectResources } from "./resource_set.ts";
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

  /** One incremental response: the resources that changed (each with its version) and the names removed. */
  sendDelta(
    type: string,
    version: string,
    resources: ReadonlyArray<{ resource: Resource; version: string }>,
    removed: readonly string[],
    identifier: string | undefined,
    config: number | undefined,
  ): string {
    const nonce = config === undefined ? String(++this.nonce) : `${config}-${++this.nonce}`;
    const response = envoyType("envoy.service.discovery.v3.DeltaDiscoveryResponse");
    const controlPlane = identifier === undefined ? {} : { control_plane: { identifier } };
    const message = response
      .encode(
        response.fromObject({
          system_version_info: version,
          type_url: type,
          nonce,
          resources: resources.map((r) => ({ name: r.resource.name, version: r.version, resource: r.resource.any })),
          removed_resources: [...removed],
          ...controlPlane,
        }),
      )
      .finish();
    this.call.write(Buffer.from(message));
    return nonce;
  }

  send(type: string, version: string, resources: ReturnType<typeof selectResources>, identifier: string | undefined, config: number | undefined): string {
    const nonce = config === undefined ? String(++this.nonce) : `${config}-${++this.nonce}`;
    const response = envoyType("envoy.service.discovery.v3.DiscoveryResponse");
    const controlPlane = identifier === undefined ? {} : { control_plane: { identifier } };
    const message = response
      .encode(response.fromObject({ version_info: version, type_url: type, nonce, resources: resources.map((r) => r.any), ...controlPlane }))
      .finish();
    this.call.write(Buffer.from(message));
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
