// Big-endian 32-bit fields written and read byte by byte: the hub path's
// framing runs rarely enough to stay in baseline code, where each call of
// Buffer#writeUInt32BE or #readUInt32BE (with its range checks) costs
// thousands of instructions.

/** Writes `value` (an unsigned 32-bit number) at `at`, big-endian. */
export function writeU32BE(out: Uint8Array, at: number, value: number): void {
  out[at] = value >>> 24;
  out[at + 1] = (value >>> 16) & 0xff;
  out[at + 2] = (value >>> 8) & 0xff;
  out[at + 3] = value & 0xff;
}

/** The unsigned 32-bit number at `at`, big-endian. */
export function readU32BE(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}
