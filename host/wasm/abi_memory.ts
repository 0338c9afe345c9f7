import { WasmStatus } from "./abi_types.ts";
import { utf8Length, writeString } from "./pairs.ts";

/**
 * A property value in Envoy's encodings (proxy-wasm.md §1.5): bytes as they
 * are, a string as UTF-8, a number or bigint as a little-endian int64, a
 * boolean as one byte.
 */
export type PropertyValue = Uint8Array | string | number | bigint | boolean;

/** What of the module's exports reading and writing its memory needs. */
export interface MemoryExports {
  memory: WebAssembly.Memory;
  proxy_on_memory_allocate(size: number): number;
}

/** Bytes of module memory as they were, for recognizing them again (ModuleMemory.holds). */
export interface Snapshot {
  bytes: Buffer;
  /**
   * The whole 32-bit words of `bytes` (as signed integers), in a plain array:
   * V8 compares its elements with a typed array's in fewer instructions than
   * two typed arrays' (holds).
   */
  words: number[];
}

/** A text decoded from module memory, kept for its address (headerText). */
interface KeptText extends Snapshot {
  text: string;
  lower: string | undefined;
}
/** Texts longer than this are decoded each time; at most this many are kept. */
const MAX_KEPT_TEXT = 256;
const MAX_KEPT_TEXTS = 64;

/**
 * The module's linear memory as every host call reads and writes it: texts
 * and bytes at the pointers the module passes, and answers copied in through
 * the module's allocator (proxy_on_memory_allocate) with their pointer and
 * length written to the out slots, as proxy-wasm hosts return data.
 */
export class ModuleMemory {
  private exports: MemoryExports | undefined;
  /** Views of module memory, re-made when the memory grows (its old buffer is then detached). */
  private memoryBuffer: ArrayBuffer | undefined;
  private memoryView!: DataView;
  private memoryBytes!: Buffer;
  /** Module memory as 32-bit words, for comparing an aligned path a word at a time. */
  private memoryWords!: Int32Array;
  /** Header texts the module passed, by address (headerText). */
  private readonly keptTexts = new Map<number, KeptText>();

  /** The instance's exports, once instantiated (the import table is made before). */
  attach(exports: MemoryExports): void {
    this.exports = exports;
  }

  // Asking the memory for its buffer is a call into V8's API on every
  // access; the views are kept instead, and made again only once the memory
  // grew (which detaches the old buffer: its length drops to 0).
  private refreshMemoryViews(): void {
    if (this.memoryBuffer !== undefined && this.memoryBuffer.byteLength !== 0) return;
    const buffer = (this.exports as MemoryExports).memory.buffer;
    this.memoryBuffer = buffer;
    this.memoryView = new DataView(buffer);
    this.memoryBytes = Buffer.from(buffer);
    this.memoryWords = new Int32Array(buffer, 0, buffer.byteLength >>> 2);
  }

  get view(): DataView {
    this.refreshMemoryViews();
    return this.memoryView;
  }

  /** All of module memory as a Buffer (no copy). */
  get bytes(): Buffer {
    this.refreshMemoryViews();
    return this.memoryBytes;
  }

  bytesAt(ptr: number, len: number): Uint8Array {
    return this.bytes.subarray(ptr, ptr + len);
  }

  /** UTF-8 text from module memory (malformed bytes become U+FFFD, as with TextDecoder); no view is made. */
  text(ptr: number, len: number): string {
    return len === 0 ? "" : this.bytes.toString("utf8", ptr, ptr + len);
  }

  /** Allocates `size` bytes with the module's allocator and writes pointer and length to the out slots; 0 when it failed. */
  allocateOut(size: number, outPtr: number, outLen: number): number {
    const ptr = size > 0 ? (this.exports as MemoryExports).proxy_on_memory_allocate(size) : 0;
    if (size > 0 && ptr === 0) return 0;
    const view = this.view;
    view.setUint32(outPtr, ptr, true);
    view.setUint32(outLen, size, true);
    return size > 0 ? ptr : -1;
  }

  /** Copies bytes into module memory (its allocator) and writes pointer and length to the out slots. */
  give(bytes: Uint8Array, outPtr: number, outLen: number): WasmStatus {
    const ptr = this.allocateOut(bytes.length, outPtr, outLen);
    if (ptr === 0) return WasmStatus.InternalFailure;
    if (ptr > 0) this.bytes.set(bytes, ptr);
    return WasmStatus.Ok;
  }

  /** A property value, encoded as Envoy encodes it, written straight into module memory. */
  giveValue(value: PropertyValue, outPtr: number, outLen: number): WasmStatus {
    if (value instanceof Uint8Array) return this.give(value, outPtr, outLen);
    if (typeof value === "string") {
      // Short ASCII (addresses, names) is measured and copied by hand, without two calls into the UTF-8 codec.
      const size = utf8Length(value);
      const ptr = this.allocateOut(size, outPtr, outLen);
      if (ptr === 0) return WasmStatus.InternalFailure;
      if (ptr > 0) writeString(this.bytes, value, ptr);
      return WasmStatus.Ok;
    }
    if (typeof value === "boolean") {
      const ptr = this.allocateOut(1, outPtr, outLen);
      if (ptr === 0) return WasmStatus.InternalFailure;
      this.bytes[ptr] = value ? 1 : 0;
      return WasmStatus.Ok;
    }
    const ptr = this.allocateOut(8, outPtr, outLen);
    if (ptr === 0) return WasmStatus.InternalFailure;
    writeInt64(this.view, ptr, value);
    return WasmStatus.Ok;
  }

  /** The bytes at `ptr` kept, with their whole 32-bit words for `holds`. */
  snapshot(ptr: number, len: number): Snapshot {
    const bytes = Buffer.from(this.bytes.subarray(ptr, ptr + len));
    const words = new Int32Array(len >>> 2);
    Buffer.from(words.buffer).set(bytes.subarray(0, words.length << 2));
    // Node's V8 keeps 32-bit small integers: every word is one, and the array's elements are untagged by a shift.
    return { bytes, words: Array.from(words) };
  }

  // The module passes the same paths and header names from the same
  // (aligned) addresses in every request: whether memory at `at` still
  // holds them is a compare of a 32-bit word at a time.
  // The lengths read once, into locals, and the kept words in a plain array:
  // 1 700 → 1 240 instructions for a 202-byte path in a loop (issue 30).
  holds(at: number, { bytes, words }: Snapshot): boolean {
    if ((at & 3) !== 0) return sameBytes(this.bytes, at, bytes);
    const mem = this.memoryWords;
    const n = words.length;
    const first = at >>> 2;
    if (first + n > mem.length) return false;
    for (let i = 0; i < n; i++) if (mem[first + i] !== words[i]) return false;
    const all = this.memoryBytes;
    const len = bytes.length;
    for (let i = n << 2; i < len; i++) if (all[at + i] !== bytes[i]) return false;
    return true;
  }

  /**
   * A header name or value the module passes, as text: the module sets the
   * same few (its forwarded-attributes header) from the same addresses in
   * every request, so the last texts seen at each address are kept and
   * found again by a compare of their bytes, without decoding.
   */
  headerText(ptr: number, len: number): string {
    if (len > MAX_KEPT_TEXT) return this.text(ptr, len);
    const kept = this.keptTexts.get(ptr);
    if (kept !== undefined && kept.bytes.length === len && this.holds(ptr, kept)) return kept.text;
    const text = this.text(ptr, len);
    if (this.keptTexts.size >= MAX_KEPT_TEXTS) this.keptTexts.clear();
    this.keptTexts.set(ptr, { ...this.snapshot(ptr, len), text, lower: undefined });
    return text;
  }

  /** A header name the module passes, lower-cased (kept as headerText is). */
  headerName(ptr: number, len: number): string {
    const text = this.headerText(ptr, len);
    const kept = this.keptTexts.get(ptr);
    if (kept === undefined || kept.text !== text) return text.toLowerCase();
    return (kept.lower ??= text.toLowerCase());
  }
}

/** Whether module memory at `at` starts with `bytes` (a few hundred bytes at most: a loop costs less than Buffer#compare's native call). */
export function sameBytes(mem: Uint8Array, at: number, bytes: Uint8Array): boolean {
  if (at + bytes.length > mem.length) return false;
  for (let i = 0; i < bytes.length; i++) if (mem[at + i] !== bytes[i]) return false;
  return true;
}

/** Writes a property value in Envoy's encoding at `at`; returns the bytes written. */
export function writeValue(mem: Buffer, view: DataView, value: PropertyValue, at: number): number {
  if (typeof value === "string") return writeString(mem, value, at);
  if (typeof value === "boolean") {
    mem[at] = value ? 1 : 0;
    return 1;
  }
  if (typeof value === "number" || typeof value === "bigint") {
    writeInt64(view, at, value);
    return 8;
  }
  mem.set(value, at);
  return value.length;
}

/** Writes an int64 (little-endian) without a BigInt for the safe non-negative integers sizes and codes are. */
function writeInt64(view: DataView, at: number, value: number | bigint): void {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) {
    view.setUint32(at, value % 0x1_0000_0000, true);
    view.setUint32(at + 4, Math.floor(value / 0x1_0000_0000), true);
  } else {
    view.setBigInt64(at, BigInt(value), true);
  }
}
