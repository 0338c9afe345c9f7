// Request path normalization before template matching, after upstream's
// ExtractRequestParts (istio/proxy src/istio/api_spec/path_matcher.h):
//   1. everything from the first `?` is dropped (templates never see the query);
//   2. if the last `:` comes after the last `/` and the text after it is a
//      verb used by some registered template, that `:` separates one more
//      segment (otherwise it stays part of the last segment);
//   3. the first character is dropped, whatever it is, and the rest is split
//      on `/`; interior empty segments are kept (`/c//v` has three segments),
//      trailing empty ones are dropped (`/a/b/` is `/a/b`).
// No percent-decoding and no case folding: matching compares raw text.
//
// The path is read as UTF-8 bytes in place (a request's own bytes, or a
// string encoded once): the delimiters are ASCII, which never occurs inside
// a multi-byte sequence, so splitting bytes splits the text. Segments are
// kept as offsets into the bytes, with the hash of each, so the trie walk
// allocates nothing.

import { FNV_OFFSET_BASIS, FNV_PRIME, hashBytes, LiteralTable } from "./literal_table";

const SLASH: u32 = 0x2f; // '/'
const COLON: u32 = 0x3a; // ':'
const QUESTION: u32 = 0x3f; // '?'

const INITIAL_SEGMENTS: i32 = 16;
// Per segment: start offset, end offset, hash.
const STRIDE: i32 = 3;

/** Owner id under which verbs are stored in a verb table. */
export const VERB_OWNER: i32 = 0;

// Bytes in the UTF-8 sequence a lead byte starts (1 for ASCII and for a
// stray continuation byte, which the header map never lets through).
// @ts-ignore: decorator
@inline
function sequenceLength(lead: u32): i32 {
  return lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

/**
 * The segments of one request path. The path matcher reuses one instance for
 * every lookup (it is scratch space, rewritten by each `split`).
 */
export class RequestSegments {
  /** Where the path's UTF-8 is, and how long. */
  ptr: usize = 0;
  length: usize = 0;
  count: i32 = 0;
  private bounds: StaticArray<i32> = new StaticArray<i32>(INITIAL_SEGMENTS * STRIDE);

  /** Offset in the path of the first byte of segment `index`. */
  // @ts-ignore: decorator
  @inline start(index: i32): i32 {
    return unchecked(this.bounds[index * STRIDE]);
  }

  /** Offset in the path just past segment `index`. */
  // @ts-ignore: decorator
  @inline end(index: i32): i32 {
    return unchecked(this.bounds[index * STRIDE + 1]);
  }

  /** `hashBytes` of segment `index`. */
  // @ts-ignore: decorator
  @inline hash(index: i32): u32 {
    return <u32>unchecked(this.bounds[index * STRIDE + 2]);
  }

  /**
   * Splits the path whose `len` UTF-8 bytes are at `ptr` as described above,
   * in one pass that also hashes the segments; `verbs` holds the registered
   * verbs.
   */
  // @ts-ignore: decorator
  @inline split(ptr: usize, len: usize, verbs: LiteralTable<bool>): void {
    this.ptr = ptr;
    this.length = len;
    this.count = 0;
    const length = <i32>len;
    if (length == 0) return;
    const first = <u32>load<u8>(ptr);
    if (first == QUESTION) return;

    // Upstream applies the verb rule only when the last `:` follows a `/`
    // (the dropped first character counts).
    let sawSlash = first == SLASH;
    let lastColon = -1; // in the current segment
    let segmentStart = min(sequenceLength(first), length);
    let end = length;
    let hash = FNV_OFFSET_BASIS;
    for (let i = segmentStart; i < length; i++) {
      const c = <u32>load<u8>(ptr + <usize>i);
      // `/`, `:` and `?` all lie in 0x2f..0x3f: one range test passes most bytes by.
      if (c - SLASH <= QUESTION - SLASH) {
        if (c == QUESTION) {
          end = i;
          break;
        }
        if (c == SLASH) {
          this.push(segmentStart, i, hash);
          segmentStart = i + 1;
          hash = FNV_OFFSET_BASIS;
          sawSlash = true;
          lastColon = -1;
          continue;
        }
        if (c == COLON) lastColon = i;
      }
      hash = (hash ^ c) * FNV_PRIME;
    }

    if (sawSlash && lastColon >= 0 && verbs.has(VERB_OWNER, ptr + <usize>(lastColon + 1), <usize>(end - lastColon - 1))) {
      this.push(segmentStart, lastColon, hashBytes(ptr + <usize>segmentStart, <usize>(lastColon - segmentStart)));
      this.push(lastColon + 1, end, hashBytes(ptr + <usize>(lastColon + 1), <usize>(end - lastColon - 1)));
    } else {
      this.push(segmentStart, end, hash);
    }
    while (this.count > 0 && this.start(this.count - 1) == this.end(this.count - 1)) this.count--;
  }

  // @ts-ignore: decorator
  @inline private push(start: i32, end: i32, hash: u32): void {
    const at = this.count * STRIDE;
    if (at == this.bounds.length) this.grow();
    const bounds = this.bounds;
    unchecked((bounds[at] = start));
    unchecked((bounds[at + 1] = end));
    unchecked((bounds[at + 2] = <i32>hash));
    this.count++;
  }

  private grow(): void {
    const bounds = new StaticArray<i32>(this.bounds.length << 1);
    memory.copy(changetype<usize>(bounds), changetype<usize>(this.bounds), <usize>this.bounds.length << 2);
    this.bounds = bounds;
  }
}
