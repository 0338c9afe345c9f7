import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ASUtil, instantiateSync } from "@assemblyscript/loader";
import { compiledModule } from "./compiled_module.ts";
import { pairsLength, writePairs } from "./pairs.ts";

/** build/filter.wasm (release) and build/filter.debug.wasm. */
export const BUILD_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "build");
export const RELEASE_WASM = join(BUILD_DIR, "filter.wasm");
export const DEBUG_WASM = join(BUILD_DIR, "filter.debug.wasm");

/** proxy-wasm log levels, as the module passes them to proxy_log. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "critical"] as const;
const UNIMPLEMENTED = 12;
// A request in the module's request buffer (assembly/embed/exports.ts): u64
// time, u32 headers length, u32 properties length, then the two serialized maps.
const REQUEST_HEADER_BYTES = 16;

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
  filter_request_buffer(size: number): number;
  filter_evaluate(handle: number, bindings: number): number;
  filter_evaluate_count(handle: number): number;
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
 * Strings cross the boundary through AssemblyScript's loader (pinned while a
 * call reads them); a request is written into module memory. The module runs
 * its collector itself, at the start of an export, when it has garbage
 * (assembly/collection.ts).
 */
export class FilterModule {
  private requestPtr = 0;
  private requestRoom = 0;
  // Module memory as a Buffer. Memory grows only when the module's heap did,
  // which detaches the old buffer (its length reads 0): that is how growth shows.
  private memoryView: Buffer;

  // The evaluate exports called without the loader's wrapper, which counts
  // every call's arguments into the module (a rest array and a second call
  // across the boundary) for optional parameters these exports do not have.
  private readonly evaluateCount: (handle: number) => number;
  private readonly evaluateEncoded: (handle: number, bindings: number) => number;

  private constructor(
    private readonly raw: ASUtil & RawExports,
    direct: RawExports,
  ) {
    this.memoryView = Buffer.from(raw.memory.buffer);
    this.evaluateCount = direct.filter_evaluate_count;
    this.evaluateEncoded = direct.filter_evaluate;
  }

  // Module memory, renewed when it grew.
  private memory(): Buffer {
    if (this.memoryView.length === 0) this.memoryView = Buffer.from(this.raw.memory.buffer);
    return this.memoryView;
  }

  // Where a request of `size` bytes is written: the module's request buffer.
  private requestAt(size: number): number {
    if (size > this.requestRoom) {
      this.requestPtr = this.raw.filter_request_buffer(size);
      this.requestRoom = size;
    }
    return this.requestPtr;
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
    return new FilterModule(instance.exports as ASUtil & RawExports, instance.instance.exports as unknown as RawExports);
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
    const headersLength = pairsLength(request.headers);
    const propertiesLength = pairsLength(request.properties);
    const at = this.requestAt(REQUEST_HEADER_BYTES + headersLength + propertiesLength);
    writeRequest(this.memory(), at, request, headersLength, propertiesLength);
    const out = this.evaluateEncoded(handle, wantBindings ? 1 : 0);
    return new Uint8Array(this.raw.__getArrayBuffer(out));
  }

  /**
   * The benchmark's per-request path: copies a request serialized once
   * (serializeRequest, as a proxy's host serializes its header map) into
   * module memory and evaluates it there as the request-headers callback does
   * before consulting the caches (header map, attributes, API spec, key,
   * quotas; no result encoding). Returns the number of quota charges, -1 for an
   * unknown handle or a malformed request.
   */
  evaluateSerialized(handle: number, request: Uint8Array): number {
    const at = this.requestAt(request.length);
    this.memory().set(request, at);
    return this.evaluateCount(handle);
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

/** A request laid out as the module's request buffer holds it (FilterModule.evaluateSerialized). */
export function serializeRequest(request: RequestInput): Uint8Array {
  const headersLength = pairsLength(request.headers);
  const propertiesLength = pairsLength(request.properties);
  const out = Buffer.alloc(REQUEST_HEADER_BYTES + headersLength + propertiesLength);
  writeRequest(out, 0, request, headersLength, propertiesLength);
  return out;
}

// Writes `request` at `at` as the request buffer holds it, given its maps' serialized lengths (pairsLength).
function writeRequest(out: Buffer, at: number, request: RequestInput, headersLength: number, propertiesLength: number): void {
  out.writeBigInt64LE(request.timeNanos, at);
  out.writeUInt32LE(headersLength, at + 8);
  out.writeUInt32LE(propertiesLength, at + 12);
  writePairs(out, at + REQUEST_HEADER_BYTES, request.headers);
  writePairs(out, at + REQUEST_HEADER_BYTES + headersLength, request.properties);
}
