/** The module's exports the host calls: the proxy-wasm 0.2.1 callbacks (optional ones may be absent). */
export interface Exports extends Record<string, unknown> {
  memory: WebAssembly.Memory;
  _initialize?: () => void;
  proxy_on_memory_allocate(size: number): number;
  proxy_on_context_create(id: number, parent: number): void;
  proxy_on_vm_start?(rootId: number, size: number): number;
  proxy_on_configure?(rootId: number, size: number): number;
  proxy_on_tick?(rootId: number): void;
  proxy_on_request_headers?(id: number, n: number, eos: number): number;
  proxy_on_request_body?(id: number, size: number, eos: number): number;
  proxy_on_response_headers?(id: number, n: number, eos: number): number;
  proxy_on_response_trailers?(id: number, n: number): number;
  proxy_on_response_body?(id: number, size: number, eos: number): number;
  proxy_on_new_connection?(id: number): number;
  proxy_on_downstream_data?(id: number, size: number, eos: number): number;
  proxy_on_upstream_data?(id: number, size: number, eos: number): number;
  proxy_on_downstream_connection_close?(id: number, peer: number): void;
  proxy_on_upstream_connection_close?(id: number, peer: number): void;
  proxy_on_grpc_receive?(rootId: number, token: number, size: number): void;
  proxy_on_grpc_close?(rootId: number, token: number, status: number): void;
  proxy_on_log?(id: number): void;
  proxy_on_done?(id: number): number;
  proxy_on_delete?(id: number): void;
  filter_allocations?(): bigint;
}

/** A callback export as `invoke` calls it (a wasm export ignores arguments it does not take). */
export type Callback = (a: number, b: number, c: number) => unknown;
