import type { Action } from "../../host/wasm/abi_types.ts";
import type { ProxyWasmVm } from "../../host/wasm/abi_host.ts";
import { DEBUG_WASM, RELEASE_WASM } from "../../host/wasm/filter_module.ts";

export const SERVICE = "orders.shop.svc.cluster.local";

/** Both builds: every scenario runs on the release module and on the debug one (runtime checks on). */
export const BUILDS = [
  ["release", RELEASE_WASM],
  ["debug", DEBUG_WASM],
] as const;

export function pluginConfig(options: { failPolicy?: object; transport?: object; quotas?: boolean; disableCheckCalls?: boolean } = {}): object {
  return {
    httpClientConfig: {
      transport: { networkFailPolicy: options.failPolicy, ...(options.transport ?? {}) },
      hubAttributes: { attributes: { "destination.uid": { stringValue: "kubernetes://orders-v1.shop" } } },
      forwardAttributes: { attributes: { "source.uid": { stringValue: "kubernetes://orders-v1.shop" } } },
      serviceConfigs: {
        [SERVICE]: {
          disableCheckCalls: options.disableCheckCalls ?? false,
          hubAttributes: { attributes: { "destination.service.host": { stringValue: SERVICE } } },
          quotaSpec: options.quotas ? [{ rules: [{ quotas: [{ quota: "requestcount", charge: 1 }] }] }] : [],
        },
      },
    },
  };
}

export const REQUEST = {
  ":method": "GET",
  ":path": "/orders/7?key=k1",
  ":authority": SERVICE,
  ":scheme": "http",
  "user-agent": "emulator",
};

export const PROPERTIES = {
  "source.address": "10.0.0.5:41000",
  "connection.mtls": true,
  "connection.uri_san_peer_certificate": "spiffe://cluster.local/ns/web/sa/frontend",
  "mesh.destination_service": SERVICE,
};

/** A CheckResponse (protobufjs object form) allowing, cacheable by request.path. */
export function allow(extra: object = {}): Record<string, unknown> {
  return {
    precondition: {
      status: { code: 0 },
      validDuration: { seconds: 60 },
      validUseCount: 100,
      referencedAttributes: { attributeMatches: [{ name: 17, condition: 2 }] },
    },
    ...extra,
  };
}

export function deny(code: number, message: string): Record<string, unknown> {
  return { precondition: { status: { code, message }, validUseCount: 0 } };
}

/** A GET of `path` to SERVICE driven straight through `vm` (its own stream under `rootId`): the stream's id and the module's action. */
export function requestToService(vm: ProxyWasmVm, rootId: number, path: string): { id: number; action: Action } {
  const id = vm.createStream(rootId, (p) => (p.join(".") === "mesh.destination_service" ? new TextEncoder().encode(SERVICE) : undefined));
  const action = vm.requestHeaders(
    id,
    [
      [":method", "GET"],
      [":path", path],
      [":authority", SERVICE],
      [":scheme", "http"],
    ],
    false,
  );
  return { id, action };
}
