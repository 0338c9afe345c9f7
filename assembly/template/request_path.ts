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

import { hashCodeUnits, LiteralTable } from "./literal_table";

const SLASH: u16 = 0x2f; // '/'
const COLON: u16 = 0x3a; // ':'
const QUESTION: u16 = 0x3f; // '?'

const INITIAL_CAPACITY: i32 = 16;

/** Owner id under which verbs are stored in a verb table. */
export const VERB_OWNER: i32 = 0;

/**
 * The segments of one request path. The path matcher reuses one instance for
 * every lookup (it is scratch space, rewritten by each `split`).
 */
export class RequestSegments {
  path: string = "";
  count: i32 = 0;
  private starts: StaticArray<i32> = new StaticArray<i32>(INITIAL_CAPACITY);
  private ends: StaticArray<i32> = new StaticArray<i32>(INITIAL_CAPACITY);
  private hashes: StaticArray<u32> = new StaticArray<u32>(INITIAL_CAPACITY);

  /** Offset in `path` of the first code unit of segment `index`. */
  start(index: i32): i32 {
    return unchecked(this.starts[index]);
  }

  /** Offset in `path` just past segment `index`. */
  end(index: i32): i32 {
    return unchecked(this.ends[index]);
  }

  /** `hashCodeUnits` of segment `index`. */
  hash(index: i32): u32 {
    return unchecked(this.hashes[index]);
  }

  /** Splits `path` as described above; `verbs` holds the registered verbs. */
  split(path: string, verbs: LiteralTable<bool>): void {
    this.path = path;
    this.count = 0;
    const base = changetype<usize>(path);
    const length = path.length;
    let end = length;
    let lastSlash = -1;
    let lastColon = -1;
    for (let i = 0; i < length; i++) {
      const c = load<u16>(base + (<usize>i << 1));
      if (c == QUESTION) {
        end = i;
        break;
      }
      if (c == SLASH) lastSlash = i;
      else if (c == COLON) lastColon = i;
    }
    if (end == 0) return;

    // Upstream compares against the last slash's position and skips the verb
    // rule when there is no slash at all.
    let verbColon = -1;
    if (lastSlash >= 0 && lastColon > lastSlash && verbs.has(VERB_OWNER, path, lastColon + 1, end)) {
      verbColon = lastColon;
    }

    let segmentStart = 1;
    for (let i = 1; i < end; i++) {
      if (load<u16>(base + (<usize>i << 1)) == SLASH || i == verbColon) {
        this.push(segmentStart, i);
        segmentStart = i + 1;
      }
    }
    this.push(segmentStart, end);
    while (this.count > 0 && this.start(this.count - 1) == this.end(this.count - 1)) this.count--;
  }

  private push(start: i32, end: i32): void {
    if (this.count == this.starts.length) this.grow();
    const index = this.count;
    unchecked((this.starts[index] = start));
    unchecked((this.ends[index] = end));
    unchecked((this.hashes[index] = hashCodeUnits(this.path, start, end)));
    this.count = index + 1;
  }

  private grow(): void {
    const capacity = this.starts.length << 1;
    const starts = new StaticArray<i32>(capacity);
    const ends = new StaticArray<i32>(capacity);
    const hashes = new StaticArray<u32>(capacity);
    memory.copy(changetype<usize>(starts), changetype<usize>(this.starts), <usize>this.count << 2);
    memory.copy(changetype<usize>(ends), changetype<usize>(this.ends), <usize>this.count << 2);
    memory.copy(changetype<usize>(hashes), changetype<usize>(this.hashes), <usize>this.count << 2);
    this.starts = starts;
    this.ends = ends;
    this.hashes = hashes;
  }
}
