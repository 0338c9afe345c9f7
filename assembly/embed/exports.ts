import { ClientConfig } from "../config/client_config";
import { compileConfig } from "../config/compile";
import { Evaluation, evaluateRequest } from "../evaluate";
import { decodeHeadersInto } from "../pairs";
import { encodeEvaluation } from "./evaluation_codec";
import { requestFromPairs, RequestView } from "../request";
import { HeaderMap } from "../attributes/header_map";
import { collectGarbageIfDue } from "../collection";

// The pure core, exported for embedders that call the module directly rather
// than through the proxy-wasm ABI: `meshctl x hub-eval`, configuration
// validation and the benchmark. Compiled configurations live in a handle
// table: the one piece of module state here, so several configurations can
// be evaluated side by side without recompiling.

const configs = new Map<i32, ClientConfig>();
// The last handle evaluated and its configuration: an embedder mostly evaluates one.
let lastHandle: i32 = 0;
let lastConfig: ClientConfig | null = null;

function configFor(handle: i32): ClientConfig | null {
  if (handle == lastHandle) return lastConfig;
  if (!configs.has(handle)) return null;
  const config = configs.get(handle);
  lastHandle = handle;
  lastConfig = config;
  return config;
}
let nextHandle: i32 = 1;
let lastError: string = "";
let lastWarnings: string = "";

export const FILTER_VERSION = "0.1.0";

export function filter_version(): string {
  return FILTER_VERSION;
}

/** Compiles a plugin configuration; returns a handle > 0, or 0 (see filter_configure_error). */
export function filter_configure(configJson: string): i32 {
  collectGarbageIfDue();
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
  collectGarbageIfDue();
  configs.delete(handle);
  if (handle == lastHandle) {
    // Forgotten whole: handle 0 (never given out) must not find it either.
    lastHandle = 0;
    lastConfig = null;
  }
}

// The request an embedder evaluates is written into module memory by the
// embedder, the way a proxy hands over a header map: it asks for room
// (filter_request_buffer), writes the request there and calls an evaluate
// export, which reads it in place. The layout, little-endian:
//   u64 time (Unix nanoseconds), u32 headers length, u32 properties length,
//   the headers, then the properties, each a proxy-wasm serialized map
//   (pairs.ts; request.ts for the property names).
const REQUEST_HEADER_BYTES: usize = 16;
let requestBuffer: ArrayBuffer = new ArrayBuffer(4096);

/** Room for a request of `size` bytes (laid out as above), kept and reused; valid until the next call of this export. */
export function filter_request_buffer(size: i32): usize {
  if (size > requestBuffer.byteLength) requestBuffer = new ArrayBuffer(size);
  return changetype<usize>(requestBuffer);
}

/**
 * Evaluates the request in the request buffer. Returns a
 * mesh.filter.v1.Evaluation, or an empty buffer for an unknown handle or a
 * malformed request.
 */
export function filter_evaluate(handle: i32, wantBindings: bool): ArrayBuffer {
  collectGarbageIfDue();
  const config = configFor(handle);
  if (config === null) return new ArrayBuffer(0);
  const req = requestInPlace();
  if (req === null) return new ArrayBuffer(0);
  const e = evaluateRequest(config, req as RequestView, wantBindings, scratchEvaluation);
  return encodeEvaluation(e).buffer;
}

/**
 * Evaluates the request in the request buffer as a proxy's request-headers
 * callback does before it consults the caches (header map, attributes as
 * the API spec, key and quota rules read them, API spec, key, quotas),
 * without encoding a result: the benchmark's per-request call. Returns the
 * number of quota charges, or -1 for an unknown handle or a malformed
 * request.
 */
export function filter_evaluate_count(handle: i32): i32 {
  collectGarbageIfDue();
  const config = configFor(handle);
  if (config === null) return -1;
  const req = requestInPlace();
  if (req === null) return -1;
  return evaluateRequest(config, req as RequestView, false, scratchEvaluation).quotas.length;
}

// The objects one evaluation fills, reused by the next: an export's result
// is encoded (or counted) before it returns, so nothing outlives the call.
const scratchHeaders = new HeaderMap(32);
const scratchRequest = new RequestView(scratchHeaders);
const scratchEvaluation = new Evaluation();

// The request buffer read in place: the headers copied into the scratch
// request's map, the properties straight into its fields.
function requestInPlace(): RequestView | null {
  const at = changetype<usize>(requestBuffer);
  const capacity = <usize>requestBuffer.byteLength;
  const headersLength = <usize>load<u32>(at, 8);
  const propertiesLength = <usize>load<u32>(at, 12);
  if (headersLength > capacity - REQUEST_HEADER_BYTES || propertiesLength > capacity - REQUEST_HEADER_BYTES - headersLength) return null;
  const headers = at + REQUEST_HEADER_BYTES;
  if (!decodeHeadersInto(headers, headersLength, scratchHeaders)) return null;
  return requestFromPairs(scratchHeaders, headers + headersLength, propertiesLength, load<i64>(at), scratchRequest);
}
