import { ClientConfig } from "../config/client_config";
import { compileConfig } from "../config/compile";
import { Evaluation, evaluateRequest } from "../evaluate";
import { decodeHeadersInto } from "../pairs";
import { encodeEvaluation } from "../proto/evaluation_codec";
import { requestFromPairs, RequestView } from "../request";
import { HeaderMap } from "../attributes/header_map";

// The pure core, exported for embedders that call the module directly rather
// than through the proxy-wasm ABI: `meshctl x hub-eval`, configuration
// validation and the benchmark. Compiled configurations live in a handle
// table: the one piece of module state here, so several configurations can
// be evaluated side by side without recompiling.

const configs = new Map<i32, ClientConfig>();
let nextHandle: i32 = 1;
let lastError: string = "";
let lastWarnings: string = "";

export const FILTER_VERSION = "0.1.0";

export function filter_version(): string {
  return FILTER_VERSION;
}

/** Compiles a plugin configuration; returns a handle > 0, or 0 (see filter_configure_error). */
export function filter_configure(configJson: string): i32 {
  const result = compileConfig(configJson);
  lastWarnings = result.warnings.join("\n");
  if (result.config === null) {
    lastError = result.error;
    return 0;
  }
  lastError = "";
  const handle = nextHandle++;
  configs.set(handle, result.config as ClientConfig);
  return handle;
}

export function filter_configure_error(): string {
  return lastError;
}

/** The warnings of the last filter_configure, one per line ("" when none). */
export function filter_configure_warnings(): string {
  return lastWarnings;
}

export function filter_release(handle: i32): void {
  configs.delete(handle);
}

/**
 * Evaluates one request: headers and properties in the proxy-wasm serialized
 * map form (see request.ts for the property names), time in Unix nanoseconds.
 * Returns a mesh.filter.v1.Evaluation, or an empty buffer for an unknown
 * handle or malformed maps.
 */
export function filter_evaluate(handle: i32, headers: ArrayBuffer, properties: ArrayBuffer, timeNanos: i64, wantBindings: bool): ArrayBuffer {
  if (!configs.has(handle)) return new ArrayBuffer(0);
  const req = requestInPlace(headers, properties, timeNanos);
  if (req === null) return new ArrayBuffer(0);
  const e = evaluateRequest(configs.get(handle), req as RequestView, wantBindings, scratchEvaluation);
  return encodeEvaluation(e).buffer;
}

// The objects one evaluation fills, reused by the next: an export's result
// is encoded (or counted) before it returns, so nothing outlives the call.
const scratchHeaders = new HeaderMap(32);
const scratchRequest = new RequestView(scratchHeaders);
const scratchEvaluation = new Evaluation();

// The maps are read where the caller put them: the headers decoded into
// the scratch request's map, the properties straight into its fields.
function requestInPlace(headers: ArrayBuffer, properties: ArrayBuffer, timeNanos: i64): RequestView | null {
  if (!decodeHeadersInto(changetype<usize>(headers), <usize>headers.byteLength, scratchHeaders)) return null;
  return requestFromPairs(scratchHeaders, changetype<usize>(properties), <usize>properties.byteLength, timeNanos, scratchRequest);
}

// About as often as the proxy path collects (abi/gc.ts: every 4096
// callbacks, about four per request).
const COLLECT_EVERY_REPEATS = 1024;

/**
 * For benchmarks: decodes and evaluates the same request `times` times, as
 * the proxy path does per request (header map decode, attributes, API spec,
 * key, quotas), without encoding a result. Returns the last attribute count.
 */
export function filter_evaluate_repeat(handle: i32, headers: ArrayBuffer, properties: ArrayBuffer, timeNanos: i64, times: i32): i32 {
  if (!configs.has(handle)) return -1;
  let count = 0;
  for (let i = 0; i < times; i++) {
    // As the proxy path does between callbacks (abi/gc.ts): safe here because
    // everything this iteration uses is re-derived from the handle table and
    // the pinned arguments after the collection.
    if (i % COLLECT_EVERY_REPEATS == 0) __collect();
    const config = configs.get(handle);
    const req = requestInPlace(headers, properties, timeNanos);
    if (req === null) return -1;
    const e = evaluateRequest(config, req as RequestView, false, scratchEvaluation);
    count = e.attributes.size;
  }
  return count;
}
