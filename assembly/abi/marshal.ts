// Moving bytes across the ABI: out-parameters, host-allocated buffers and
// UTF-8 strings. The only code besides host.ts that handles raw pointers.

import { decodeUtf8, encodeUtf8 } from "../utf8";

// Out-parameters land here: pointer at +0, length at +4, u64 results at +8.
const SCRATCH: usize = memory.data(16);

export function scratchPtrSlot(): usize {
  return SCRATCH;
}

export function scratchLenSlot(): usize {
  return SCRATCH + 4;
}

export function scratchU64Slot(): usize {
  return SCRATCH + 8;
}

/**
 * Takes ownership of the block the host allocated through
 * proxy_on_memory_allocate (pointer and length in the scratch slots): copies
 * it into a managed buffer and frees the raw block.
 */
export function takeHostBytes(): Uint8Array {
  const ptr = <usize>load<u32>(SCRATCH);
  const len = <i32>load<u32>(SCRATCH + 4);
  const out = new Uint8Array(len);
  if (len > 0) memory.copy(out.dataStart, ptr, <usize>len);
  if (ptr != 0) heap.free(ptr);
  return out;
}

/** The host-allocated block in the scratch slots, read in place. */
export function hostBlockPtr(): usize {
  return <usize>load<u32>(SCRATCH);
}

export function hostBlockLength(): usize {
  return <usize>load<u32>(SCRATCH + 4);
}

/** Frees the host-allocated block once it has been read in place. */
export function dropHostBlock(): void {
  const ptr = <usize>load<u32>(SCRATCH);
  if (ptr != 0) heap.free(ptr);
}

/** Same, decoded as UTF-8 text. */
export function takeHostString(): string {
  const ptr = <usize>load<u32>(SCRATCH);
  const len = <usize>load<u32>(SCRATCH + 4);
  const out = len > 0 ? decodeUtf8(ptr, len) : "";
  if (ptr != 0) heap.free(ptr);
  return out;
}

export function utf8(s: string): ArrayBuffer {
  return encodeUtf8(s);
}

/** A property path: segments joined by NUL bytes, as hosts expect. */
export function propertyPath(segments: StaticArray<string>): ArrayBuffer {
  return String.UTF8.encode(segments.join("\0"));
}
