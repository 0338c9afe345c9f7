import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ASUtil, instantiateSync } from "@assemblyscript/loader";
import { compiledModule } from "./compiled_module.ts";
import { encodePairs } from "./pairs.ts";

/** build/filter.wasm (release) and build/filter.debug.wasm. */
export const BUILD_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "build");
export const RELEASE_WASM = join(BUILD_DIR, "filter.wasm");
export const DEBUG_WASM = join(BUILD_DIR, "filter.debug.wasm");

/** proxy-wasm log levels, as the module passes them to proxy_log. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "critical"] as const;
const UNIMPLEMENTED = 12;
const COLLECT_EVERY_CALLS = 256;

export type LogSink = (level: (typeof LOG_LEVELS)[number], message: string) => void;

/** Connection facts and the request as the pure core reads them (assembly/request.ts). */
export interface RequestInput {
  /** Header names lower-case; pseudo-headers `:method`, `:path`, `:authority`, `:scheme` included. */
  headers: ReadonlyArray<readonly [string, string]>;
  /** Property names from assembly/request.ts (`source.address`, `connection.mtls`, …). */
  properties: ReadonlyArray<readonly [string, string]>;
  timeNanos: bigint;
}

interface RawExports extends Record<string, unknown> {
  memory: WebAssembly.Memory;
  filter_version(): number;
  filter_configure(configPtr: number): number;
  filter_configure_error(): number;
  filter_configure_warnings(): number;
  filter_release(handle: number): void;
  filter_evaluate(handle: number, headers: number, properties: number, time: bigint, bindings: number): number;
  filter_evaluate_repeat(handle: number, headers: number, properties: number, time: bigint, times: number): number;
  filter_allocations(): bigint;
  template_check(textPtr: number): number;
  regex_check(patternPtr: number): number;
  regex_compile(patternPtr: number): number;
  regex_full_match(handle: number, inputPtr: number): number;
  regex_search(handle: number, inputPtr: number): number;
  regex_release(handle: number): void;
}

/** A compiled configuration's handle and what was accepted with a warning, or why it was refused. */
export type ConfigureResult = { handle: number; warnings: string[] } | { error: string };

/**
 * The filter module instantiated for direct calls to its pure exports, as
 * `meshctl x hub-eval`, configuration validation and the benchmark use it.
 * Strings and buffers cross the boundary through AssemblyScript's loader.
 */
export class FilterModule {
  private calls = 0;

  private constructor(private readonly raw: ASUtil & RawExports) {}

  // The module uses AssemblyScript's minimal runtime, whose collector runs
  // only when asked. Before a call starts, the previous call's results have
  // been copied out and nothing of ours is held unpinned, so collecting there
  // is safe; every COLLECT_EVERY_CALLS calls keeps the heap small.
  private beforeCall(): void {
    if (++this.calls % COLLECT_EVERY_CALLS === 0) this.raw.__collect();
  }

  static load(path = RELEASE_WASM, log: LogSink = () => {}): FilterModule {
    const module = compiledModule(path);
    let memory: WebAssembly.Memory | undefined;
    const imports = {
      env: {
        proxy_log(level: number, ptr: number, len: number): number {
          const text = memory ? Buffer.from(memory.buffer, ptr, len).toString("utf8") : "";
          log(LOG_LEVELS[level] ?? "critical", text);
          return 0;
        },
      },
    };
    const instance = instantiateSync<RawExports>(module, withUnimplementedImports(module, imports));
    memory = instance.exports.memory;
    (instance.exports as unknown as { _initialize?: () => void })._initialize?.();
    return new FilterModule(instance.exports as ASUtil & RawExports);
  }

  version(): string {
    return this.raw.__getString(this.raw.filter_version());
  }

  /** Compiles a plugin configuration (JSON text); see assembly/config/compile.ts for its shape. */
  configure(configJson: string): ConfigureResult {
    const handle = this.withString(configJson, (p) => this.raw.filter_configure(p));
    if (handle > 0) {
      const warnings = this.raw.__getString(this.raw.filter_configure_warnings());
      return { handle, warnings: warnings ? warnings.split("\n") : [] };
    }
    return { error: this.raw.__getString(this.raw.filter_configure_error()) };
  }

  release(handle: number): void {
    this.raw.filter_release(handle);
  }

  /** Evaluates one request; returns mesh.filter.v1.Evaluation bytes (empty for an unknown handle). */
  evaluate(handle: number, request: RequestInput, wantBindings: boolean): Uint8Array {
    this.beforeCall();
    const r = this.raw;
    const headers = r.__pin(r.__newArrayBuffer(toArrayBuffer(encodePairs(request.headers))));
    const props = r.__pin(r.__newArrayBuffer(toArrayBuffer(encodePairs(request.properties))));
    try {
      const out = r.filter_evaluate(handle, headers, props, request.timeNanos, wantBindings ? 1 : 0);
      return new Uint8Array(r.__getArrayBuffer(out));
    } finally {
      r.__unpin(headers);
      r.__unpin(props);
    }
  }

  /**
   * Benchmark hook: evaluates the same request `times` times inside the module
   * (decode, attributes, API spec, key, quotas; no result encoding).
   */
  evaluateRepeatedly(handle: number, request: RequestInput, times: number): number {
    this.beforeCall();
    const r = this.raw;
    const headers = r.__pin(r.__newArrayBuffer(toArrayBuffer(encodePairs(request.headers))));
    const props = r.__pin(r.__newArrayBuffer(toArrayBuffer(encodePairs(request.properties))));
    try {
      return r.filter_evaluate_repeat(handle, headers, props, request.timeNanos, times);
    } finally {
      r.__unpin(headers);
      r.__unpin(props);
    }
  }

  /** Allocations the module has made so far: counted by the debug build only, always 0 in release. */
  allocations(): bigint {
    return this.raw.filter_allocations();
  }

  /** "" when the uriTemplate is valid, else why not. */
  checkTemplate(text: string): string {
    return this.raw.__getString(this.withString(text, (p) => this.raw.template_check(p)));
  }

  /** "" when the regex engine accepts the pattern, else why not. */
  checkRegex(pattern: string): string {
    return this.raw.__getString(this.withString(pattern, (p) => this.raw.regex_check(p)));
  }

  /** A compiled regex with whole-string and search matching, or the refusal. */
  compileRegex(pattern: string): { fullMatch(s: string): boolean; search(s: string): boolean; release(): void } | { error: string } {
    const handle = this.withString(pattern, (p) => this.raw.regex_compile(p));
    if (handle === 0) return { error: this.checkRegex(pattern) };
    const r = this.raw;
    return {
      fullMatch: (s) => this.withString(s, (p) => r.regex_full_match(handle, p)) !== 0,
      search: (s) => this.withString(s, (p) => r.regex_search(handle, p)) !== 0,
      release: () => r.regex_release(handle),
    };
  }

  private withString<T>(s: string, call: (ptr: number) => T): T {
    this.beforeCall();
    const ptr = this.raw.__pin(this.raw.__newString(s));
    try {
      return call(ptr);
    } finally {
      this.raw.__unpin(ptr);
    }
  }
}

/**
 * The pure exports never call the proxy, but the module imports the ABI for
 * its proxy entry points: every `env` function not in `imports` answers
 * UNIMPLEMENTED, so the module can be instantiated outside a proxy.
 */
export function withUnimplementedImports(module: WebAssembly.Module | Uint8Array, imports: { env: Record<string, unknown> }): { env: Record<string, unknown> } {
  const env = { ...imports.env };
  for (const imp of WebAssembly.Module.imports(module instanceof WebAssembly.Module ? module : compiledModule(module))) {
    if (imp.module === "env" && imp.kind === "function" && !(imp.name in env)) env[imp.name] = () => UNIMPLEMENTED;
  }
  return { ...imports, env };
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
