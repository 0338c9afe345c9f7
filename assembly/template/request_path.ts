// Request path normalization before template matching, after upstream's
// ExtractRequestParts (istio/proxy src/istio/api_spec/path_matcher.h):
//   1. everything from the first `?` is dropped (templates never see the query);
//   2. if the last `:` comes after the last `/` and the text after it is a
//      verb used by some registered template, that `:` separates one more
//      segment (otherwise it stays part of the last segment);
//   3. the first character is dropped, whatever it is, and the rest is split
//      on `/`; interior empty segments are kept (`/c//v` has three segments),
//      trailing empty ones are dropped (`/a/b/` is `/a/b`).
// No percent-decoding and no case folding: matching compares raw code units.
//
// Segments are kept as offsets into the path, with the hash of each, so the
// trie walk allocates no substrings.

import { FNV_OFFSET_BASIS, FNV_PRIME, hashCodeUnits, LiteralTable } from "./literal_table";

const SLASH: u16 = 0x2f; // '/'
const COLON: u16 = 0x3a; // ':'
const QUESTION: u16 = 0x3f; // '?'

const INITIAL_SEGMENTS: i32 = 16;
// Per segment: start offset, end offset, hash.
const STRIDE: i32 = 3;

/** Owner id under which verbs are stored in a verb table. */
export const VERB_OWNER: i32 = 0;

/**
 * The segments of one request path. The path matcher reuses one instance for
 * every lookup (it is scratch space, rewritten by each `split`).
 */
export class RequestSegments {
  path: string = "";
  count: i32 = 0;
  private bounds: StaticArray<i32> = new StaticArray<i32>(INITIAL_SEGMENTS * STRIDE);

  /** Offset in `path` of the first code unit of segment `index`. */
  // @ts-ignore: decorator
  @inline start(index: i32): i32 {
    return unchecked(this.bounds[index * STRIDE]);
  }

  /** Offset in `path` just past segment `index`. */
  // @ts-ignore: decorator
  @inline end(index: i32): i32 {
    return unchecked(this.bounds[index * STRIDE + 1]);
  }

  /** `hashCodeUnits` of segment `index`. */
  // @ts-ignore: decorator
  @inline hash(index: i32): u32 {
    return <u32>unchecked(this.bounds[index * STRIDE + 2]);
  }

  /**
   * Splits `path` as described above, in one pass that also hashes the
   * segments; `verbs` holds the registered verbs.
   */
  split(path: string, verbs: LiteralTable<bool>): void {
    this.path = path;
    this.count = 0;
    const length = path.length;
    if (length == 0) return;
    const base = changetype<usize>(path);
    const first = load<u16>(base);
    if (first == QUESTION) return;

    // Upstream applies the verb rule only when the last `:` follows a `/`
    // (the dropped first character counts).
    let sawSlash = first == SLASH;
    let lastColon = -1; // in the current segment
    let segmentStart = 1;
    let end = length;
    let hash = FNV_OFFSET_BASIS;
    for (let i = 1; i < length; i++) {
      const c = load<u16>(base + (<usize>i << 1));
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
      hash = (hash ^ <u32>c) * FNV_PRIME;
    }

    if (sawSlash && lastColon >= 0 && verbs.has(VERB_OWNER, path, lastColon + 1, end)) {
      this.push(segmentStart, lastColon, hashCodeUnits(path, segmentStart, lastColon));
      this.push(lastColon + 1, end, hashCodeUnits(path, lastColon + 1, end));
    } else {
      this.push(segmentStart, end, hash);
    }
    while (this.count > 0 && this.start(this.count - 1) == this.end(this.count - 1)) this.count--;
  }

  private push(start: i32, end: i32, hash: u32): void {
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
