// FNV-1a, 64-bit (Fowler, Noll, Vo; draft-eastlake-fnv), fed field by field
// so a signature is computed straight from the attribute values without
// building a byte buffer. Strings are hashed as their UTF-16 code units
// (the module's own representation: no transcoding, no allocation); the hash
// never leaves the module, so its byte layout is private.
//
// Variable-length fields are length-prefixed by their callers, so distinct
// field sequences do not collide by concatenation ("ab"+"c" vs "a"+"bc").

export const FNV64_OFFSET_BASIS: u64 = 0xcbf29ce484222325;
export const FNV64_PRIME: u64 = 0x00000100000001b3;

export function fnv64Byte(hash: u64, byte: u32): u64 {
  return (hash ^ <u64>(byte & 0xff)) * FNV64_PRIME;
}

/** Hashes `length` bytes at `pointer`. */
export function fnv64Bytes(hash: u64, pointer: usize, length: usize): u64 {
  const stop = pointer + length;
  while (pointer < stop) {
    hash = (hash ^ <u64>load<u8>(pointer)) * FNV64_PRIME;
    pointer++;
  }
  return hash;
}

/** Little-endian bytes of a 32-bit value. */
export function fnv64U32(hash: u64, value: u32): u64 {
  for (let i = 0; i < 4; i++) {
    hash = (hash ^ <u64>(value & 0xff)) * FNV64_PRIME;
    value >>= 8;
  }
  return hash;
}

/** Little-endian bytes of a 64-bit value. */
export function fnv64U64(hash: u64, value: u64): u64 {
  for (let i = 0; i < 8; i++) {
    hash = (hash ^ (value & 0xff)) * FNV64_PRIME;
    value >>= 8;
  }
  return hash;
}

/**
 * Length (in code units) then the UTF-16 code units of `text`, a unit (and
 * the length) per step rather than a byte: half the steps of a byte-wise
 * FNV over the same units, and as private (signatures confirm what they find).
 */
export function fnv64String(hash: u64, text: string): u64 {
  const length = <usize>text.length;
  hash = (hash ^ <u64>length) * FNV64_PRIME;
  const chars = changetype<usize>(text);
  for (let i: usize = 0; i < length; i++) hash = (hash ^ <u64>load<u16>(chars + (i << 1))) * FNV64_PRIME;
  return hash;
}
