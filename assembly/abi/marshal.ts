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

// Blocks the host hands over (proxy_on_memory_allocate) are read and freed
// by the module before its next host call, and most are small (a header
// map, a set of properties). One static area serves them while it is free,
// so a request's host blocks cost no allocator work; the allocator serves a
// block larger than the area, or one asked for while the area is taken.
const HOST_AREA_SIZE: usize = 16384;
const HOST_AREA: usize = memory.data(<i32>HOST_AREA_SIZE, 16);
let hostAreaTaken = false;

/** proxy_on_memory_allocate: room for `size` bytes the host writes and the module frees (freeHostBlock). */
export function allocateForHost(size: usize): usize {
  if (!hostAreaTaken && size <= HOST_AREA_SIZE) {
    hostAreaTaken = true;
    return HOST_AREA;
  }
  return heap.alloc(size);
}

/** Frees a block from allocateForHost (0: none). */
export function freeHostBlock(ptr: usize): void {
  if (ptr == HOST_AREA) hostAreaTaken = false;
  else if (ptr != 0) heap.free(ptr);
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
  freeHostBlock(ptr);
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
  freeHostBlock(<usize>load<u32>(SCRATCH));
}

/** Same, decoded as UTF-8 text. */
export function takeHostString(): string {
  const ptr = <usize>load<u32>(SCRATCH);
  const len = <usize>load<u32>(SCRATCH + 4);
  const out = len > 0 ? decodeUtf8(ptr, len) : "";
  freeHostBlock(ptr);
  return out;
}

export function utf8(s: string): ArrayBuffer {
  return encodeUtf8(s);
}

/** A property path: segments joined by NUL bytes, as hosts expect. */
export function propertyPath(segments: StaticArray<string>): ArrayBuffer {
  return String.UTF8.encode(segments.join("\0"));
}
