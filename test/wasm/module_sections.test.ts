import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEBUG_WASM, RELEASE_WASM } from "../../host/wasm/filter_module.ts";
import { readSections } from "./wasm_sections.ts";

// A proxy links a module only if every import is one it provides, with the
// signature it provides, and it runs no start section (see
// shared/research/proxy-wasm.md §1.3 and §3.3). These tests read the built
// binaries the way a proxy would.
const PROXY_IMPORTS: Record<string, string> = {
  proxy_log: "(i32,i32,i32)->i32",
  proxy_get_log_level: "(i32)->i32",
  proxy_get_current_time_nanoseconds: "(i32)->i32",
  proxy_set_tick_period_milliseconds: "(i32)->i32",
  proxy_get_buffer_status: "(i32,i32,i32)->i32",
  proxy_get_buffer_bytes: "(i32,i32,i32,i32,i32)->i32",
  proxy_set_buffer_bytes: "(i32,i32,i32,i32,i32)->i32",
  proxy_get_header_map_pairs: "(i32,i32,i32)->i32",
  proxy_set_header_map_pairs: "(i32,i32,i32)->i32",
  proxy_get_header_map_value: "(i32,i32,i32,i32,i32)->i32",
  proxy_add_header_map_value: "(i32,i32,i32,i32,i32)->i32",
  proxy_replace_header_map_value: "(i32,i32,i32,i32,i32)->i32",
  proxy_remove_header_map_value: "(i32,i32,i32)->i32",
  proxy_get_header_map_size: "(i32,i32)->i32",
  proxy_get_property: "(i32,i32,i32,i32)->i32",
  proxy_set_property: "(i32,i32,i32,i32)->i32",
  proxy_continue_stream: "(i32)->i32",
  proxy_close_stream: "(i32)->i32",
  proxy_send_local_response: "(i32,i32,i32,i32,i32,i32,i32,i32)->i32",
  proxy_http_call: "(i32,i32,i32,i32,i32,i32,i32,i32,i32,i32)->i32",
  proxy_grpc_call: "(i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32)->i32",
  proxy_grpc_cancel: "(i32)->i32",
  proxy_grpc_close: "(i32)->i32",
  proxy_get_status: "(i32,i32,i32)->i32",
  proxy_set_effective_context: "(i32)->i32",
  proxy_done: "()->i32",
  proxy_define_metric: "(i32,i32,i32,i32)->i32",
  proxy_increment_metric: "(i32,i64)->i32",
  proxy_record_metric: "(i32,i64)->i32",
  proxy_get_metric: "(i32,i32)->i32",
};

// The callbacks the filter implements, with the signatures a proxy checks
// when it looks them up (proxy-wasm.md §1.2).
const PROXY_EXPORTS: Record<string, string> = {
  proxy_abi_version_0_2_1: "()->()",
  proxy_on_memory_allocate: "(i32)->i32",
  proxy_on_context_create: "(i32,i32)->()",
  proxy_on_vm_start: "(i32,i32)->i32",
  proxy_on_configure: "(i32,i32)->i32",
  proxy_on_tick: "(i32)->()",
  proxy_on_request_headers: "(i32,i32,i32)->i32",
  proxy_on_response_headers: "(i32,i32,i32)->i32",
  proxy_on_response_trailers: "(i32,i32)->i32",
  proxy_on_grpc_receive: "(i32,i32,i32)->()",
  proxy_on_grpc_close: "(i32,i32,i32)->()",
  proxy_on_log: "(i32)->()",
  proxy_on_done: "(i32)->i32",
  proxy_on_delete: "(i32)->()",
  proxy_on_new_connection: "(i32)->i32",
  proxy_on_downstream_data: "(i32,i32,i32)->i32",
  proxy_on_upstream_data: "(i32,i32,i32)->i32",
  proxy_on_downstream_connection_close: "(i32,i32)->()",
  proxy_on_upstream_connection_close: "(i32,i32)->()",
};

for (const [label, path] of [
  ["release", RELEASE_WASM],
  ["debug", DEBUG_WASM],
] as const) {
  describe(`built module (${label}) links in a proxy`, () => {
    const sections = readSections(path);
    it("imports only env.proxy_* functions, each with the ABI's signature", () => {
      for (const imp of sections.imports) {
        assert.equal(imp.module, "env", `${imp.module}.${imp.name}`);
        assert.equal(imp.kind, "func", imp.name);
        assert.ok(imp.name in PROXY_IMPORTS, `${imp.name} is not a proxy-wasm host function`);
        assert.equal(imp.signature, PROXY_IMPORTS[imp.name], imp.name);
      }
    });
    it("has no abort, seed or trace import", () => {
      const names = sections.imports.map((i) => i.name);
      for (const forbidden of ["abort", "seed", "trace"]) assert.ok(!names.includes(forbidden), forbidden);
    });
    it("has no start section and exports _initialize instead", () => {
      assert.equal(sections.hasStart, false);
      assert.ok(sections.exports.some((e) => e.name === "_initialize" && e.signature === "()->()"));
    });
    it("exports the ABI version marker and every callback it implements with the ABI's signature", () => {
      for (const [name, signature] of Object.entries(PROXY_EXPORTS)) {
        const found = sections.exports.find((e) => e.name === name);
        assert.ok(found, `${name} is not exported`);
        assert.equal(found.signature, signature, name);
      }
    });
    it("exports its memory", () => {
      assert.ok(sections.exports.some((e) => e.name === "memory" && e.kind === "memory"));
    });
    it("exports at most one allocator a proxy would use", () => {
      const allocators = sections.exports.filter((e) => e.name === "malloc" || e.name === "proxy_on_memory_allocate");
      assert.ok(allocators.length <= 1, allocators.map((a) => a.name).join(", "));
    });
  });
}
