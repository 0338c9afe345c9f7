import { WasmStatus } from "./abi_types.ts";
import { type ModuleMemory, type PropertyValue, type Snapshot, sameBytes, writeValue } from "./abi_memory.ts";
import { writeU32 } from "./pairs.ts";

export type { PropertyValue } from "./abi_memory.ts";

/** Looks up a property (path segments, e.g. ["source", "address"]) for a stream; undefined = NOT_FOUND. */
export type PropertyResolver = (path: string[]) => Uint8Array | undefined;

/**
 * Properties looked up by dotted name ("source.address"), answered in any
 * PropertyValue form: the value is written straight into module memory, with
 * no path array and no intermediate bytes (the sidecar's data path).
 */
export interface PropertySource {
  property(name: string): PropertyValue | undefined;
  /**
   * An object standing for this source's answers as they are now: sources
   * that give the same object answer every property alike, so the host may
   * keep a batched read's serialized answer under it. Undefined: no such promise.
   */
  answersKey?(): object | undefined;
}

/** What a stream's properties are read from. */
export type StreamProperties = PropertyResolver | PropertySource;

/** A batched property read as the module asks it: its path, the dotted names, each name as UTF-8, and room for the values of one read. */
interface PropertyBatch extends Snapshot {
  names: readonly string[];
  keys: readonly Buffer[];
  values: Array<PropertyValue | undefined>;
  /** Serialized answers by the answersKey of the sources that gave them (kept as long as the key is). */
  saved: WeakMap<object, Uint8Array>;
  /** The last answer computed (undefined when a value was bytes, which may change in place), with its values. */
  last: Uint8Array | undefined;
  lastValues: Array<PropertyValue | undefined>;
}

/** `mesh` NUL `properties` NUL: the path prefix of a batched property read. */
const BATCH_PREFIX = Buffer.from("mesh\0properties\0", "latin1");
/** Envoy has a few dozen properties; a module asking for more names than this gets them converted each time. */
const MAX_DOTTED_NAMES = 256;

/**
 * proxy_get_property: one property by path, or a batched read (`mesh`
 * `properties` name…, docs/filter.md "Properties the filter reads") answered
 * as one pairs map. `sourceOf` gives what the effective context's properties
 * are read from; `propertyBatches` false answers batched reads NOT_FOUND, as Envoy.
 */
export function propertyImports(memory: ModuleMemory, sourceOf: () => StreamProperties | undefined, env: { propertyBatches?: boolean }) {
  const reader = new PropertyReader(memory);
  return {
    proxy_get_property(pathPtr: number, pathLen: number, outPtr: number, outLen: number) {
      const batch = env.propertyBatches === false ? undefined : reader.batchNames(pathPtr, pathLen);
      if (batch) return reader.giveProperties(sourceOf(), batch, outPtr, outLen);
      const value = reader.lookUp(sourceOf(), pathPtr, pathLen);
      if (value === undefined) return WasmStatus.NotFound;
      return memory.giveValue(value, outPtr, outLen);
    },
  };
}

/** Reads property paths from module memory and writes the answers back, keeping what the module asks for again and again. */
class PropertyReader {
  /** Property paths seen, NUL-separated → dotted (at most MAX_DOTTED_NAMES). */
  private readonly dottedNames = new Map<string, string>();
  /** Batched reads seen, by the address of their path (at most MAX_DOTTED_NAMES). */
  private readonly batches = new Map<number, PropertyBatch>();

  constructor(private readonly memory: ModuleMemory) {}

  /**
   * A property path as the module passes it (segments separated by NUL) in
   * dotted form. The module asks for the same few paths in every request:
   * their dotted forms are kept, so a read costs one short decode.
   */
  private propertyName(ptr: number, len: number): string {
    const mem = this.memory.bytes;
    let ascii = true;
    for (let i = ptr; i < ptr + len; i++) {
      if (mem[i] >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (!ascii) return this.memory.text(ptr, len).replaceAll("\0", ".");
    const raw = mem.toString("latin1", ptr, ptr + len);
    let dotted = this.dottedNames.get(raw);
    if (dotted === undefined) {
      dotted = internalized(raw.replaceAll("\0", "."));
      if (this.dottedNames.size < MAX_DOTTED_NAMES) this.dottedNames.set(raw, dotted);
    }
    return dotted;
  }

  lookUp(source: StreamProperties | undefined, pathPtr: number, pathLen: number): PropertyValue | undefined {
    if (source === undefined) return undefined;
    if (typeof source === "function") return source(this.memory.text(pathPtr, pathLen).split("\0"));
    return source.property(this.propertyName(pathPtr, pathLen));
  }

  /**
   * The names of a batched read (path `mesh` `properties` name…,
   * docs/filter.md "Properties the filter reads"), undefined for any other path. The module
   * asks for the same few sets from the same addresses in every request:
   * each is decoded once and recognized by a byte compare afterwards.
   */
  batchNames(pathPtr: number, pathLen: number): PropertyBatch | undefined {
    if (pathLen < BATCH_PREFIX.length) return undefined;
    const mem = this.memory.bytes;
    const seen = this.batches.get(pathPtr);
    if (seen && seen.bytes.length === pathLen && this.memory.holds(pathPtr, seen)) return seen;
    if (!sameBytes(mem, pathPtr, BATCH_PREFIX)) return undefined;
    const names = mem
      .toString("utf8", pathPtr + BATCH_PREFIX.length, pathPtr + pathLen)
      .split("\0")
      .filter((n) => n.length > 0)
      .map(internalized);
    const batch: PropertyBatch = {
      ...this.memory.snapshot(pathPtr, pathLen),
      names,
      keys: names.map((n) => Buffer.from(n, "utf8")),
      values: names.map(() => undefined),
      saved: new WeakMap(),
      last: undefined,
      lastValues: names.map(() => undefined),
    };
    if (this.batches.size < MAX_DOTTED_NAMES) this.batches.set(pathPtr, batch);
    return batch;
  }

  /**
   * A batched read's answer: the proxy-wasm pairs map of the properties the
   * context has (dotted name → the value in Envoy's encoding, as a single
   * read gives it), absent ones left out; written straight into module memory.
   */
  giveProperties(source: StreamProperties | undefined, batch: PropertyBatch, outPtr: number, outLen: number): WasmStatus {
    // A source that vouches its answers are those of an earlier one gets them as they were serialized then.
    const key = source !== undefined && typeof source !== "function" ? source.answersKey?.() : undefined;
    if (key !== undefined) {
      const saved = batch.saved.get(key);
      if (saved !== undefined) return this.memory.give(saved, outPtr, outLen);
    }
    const { names, keys, values, lastValues } = batch;
    let count = 0;
    let capacity = 4;
    // Equal values are equal bytes: an answer like the last one computed (the log side's
    // code, sizes and upstream of one request are mostly the last one's) is copied whole.
    let asLast = batch.last !== undefined;
    for (let i = 0; i < names.length; i++) {
      const value = source === undefined ? undefined : typeof source === "function" ? source(names[i].split(".")) : source.property(names[i]);
      values[i] = value;
      if (value !== lastValues[i]) asLast = false;
      if (value === undefined) continue;
      count++;
      capacity += 10 + keys[i].length + valueCapacity(value);
    }
    if (asLast) {
      for (let i = 0; i < values.length; i++) values[i] = undefined;
      const last = batch.last as Uint8Array;
      if (key !== undefined) batch.saved.set(key, last);
      return this.memory.give(last, outPtr, outLen);
    }
    const ptr = this.memory.allocateOut(capacity, outPtr, outLen);
    if (ptr === 0) return WasmStatus.InternalFailure;
    const mem = this.memory.bytes;
    const view = this.memory.view;
    writeU32(mem, ptr, count);
    let sizes = ptr + 4;
    let data = sizes + count * 8;
    let bytesValue = false;
    for (let i = 0; i < names.length; i++) {
      const value = values[i];
      lastValues[i] = value;
      if (value === undefined) continue;
      values[i] = undefined;
      if (value instanceof Uint8Array) bytesValue = true;
      const key = keys[i];
      const kl = key.length;
      // Names are a few bytes: copied by hand, cheaper than a call into TypedArray#set each.
      for (let j = 0; j < kl; j++) mem[data + j] = key[j];
      mem[data + kl] = 0;
      data += kl + 1;
      const vl = writeValue(mem, view, value, data);
      mem[data + vl] = 0;
      data += vl + 1;
      writeU32(mem, sizes, kl);
      writeU32(mem, sizes + 4, vl);
      sizes += 8;
    }
    view.setUint32(outLen, data - ptr, true);
    const answer = Buffer.from(mem.subarray(ptr, data));
    if (key !== undefined) batch.saved.set(key, answer);
    batch.last = bytesValue ? undefined : answer;
    return WasmStatus.Ok;
  }
}

/**
 * The same text as a string V8 keeps once (a property key's form): property
 * sources compare names with literals and look them up as object keys in
 * every request, which then costs a pointer compare instead of reading the text.
 */
function internalized(s: string): string {
  return Object.keys({ [s]: 0 })[0];
}

/** Room enough for a property value in Envoy's encoding (giveValue): UTF-8 is at most 3 bytes per UTF-16 unit. */
function valueCapacity(value: PropertyValue): number {
  if (typeof value === "string") return value.length * 3;
  if (typeof value === "boolean") return 1;
  if (typeof value === "number" || typeof value === "bigint") return 8;
  return value.length;
}

const encoder = new TextEncoder();

/** Property value encodings Envoy uses (proxy-wasm.md §1.5). */
export const propertyValue = {
  string: (s: string) => encoder.encode(s),
  bool: (b: boolean) => Uint8Array.of(b ? 1 : 0),
  int64: (n: bigint | number) => {
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigInt64(0, BigInt(n), true);
    return out;
  },
};
