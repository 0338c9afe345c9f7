import { KNOWN_SLOTS, knownAt, knownSlotInline, knownSlotOfString } from "../known_strings";
import { AttributeValue } from "./value";

// Content types that make context.protocol "grpc" (exact match, as upstream).
export function isGrpcContentType(ct: AttributeValue): bool {
  return ct.textEquals("application/grpc") || ct.textEquals("application/grpc+proto") || ct.textEquals("application/grpc+json");
}

// Methods are known strings (known_strings.ts): a known one gets a shared
// value whose text is the shared string, so the API-spec matcher compares
// it by identity and never decodes it.
const METHODS: StaticArray<string> = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
const methodValues = methodValuesBySlot();

function methodValuesBySlot(): StaticArray<AttributeValue | null> {
  const table = new StaticArray<AttributeValue | null>(KNOWN_SLOTS);
  for (let i = 0; i < METHODS.length; i++) {
    const name = unchecked(METHODS[i]);
    const slot = knownSlotOfString(name);
    assert(slot >= 0, "derive: a method must be a known string");
    unchecked((table[slot] = AttributeValue.ofString(knownAt(slot))));
  }
  return table;
}

// The method's shared value when it is a known one, else the request's own.
// @ts-ignore: decorator
@inline
export function methodValue(own: AttributeValue): AttributeValue {
  const slot = knownSlotInline(own.textPtr(), own.textLen());
  if (slot < 0) return own;
  const shared = unchecked(methodValues[slot]);
  return shared !== null ? shared : own;
}

// The announced body size: decimal digits are read in place; anything else
// is read as I64.parseInt reads it (whitespace, signs, radix prefixes).
export function contentLength(v: AttributeValue): i64 {
  const ptr = v.textPtr();
  const len = v.textLen();
  if (len > 0 && len <= 18) {
    let n: i64 = 0;
    let i: usize = 0;
    for (; i < len; i++) {
      const d = <u32>load<u8>(ptr + i) - 0x30;
      if (d > 9) break;
      n = n * 10 + <i64>d;
    }
    if (i == len) return n;
  }
  return I64.parseInt(v.str);
}
