import { GLOBAL_WORD_COUNT, globalWordIndex } from "./global_words";

/**
 * The word table of one hub message (hub-client.md §9.2): a string that is a
 * global word below the peer's `globalWordCount` encodes as its global index;
 * any other string gets -1, -2, … in first-use order and is appended to
 * `words` (CompressedAttributes.words, or ReportRequest.default_words).
 *
 * Reuse one dictionary per encoder and `reset` it per message: the lookup
 * map and the word array keep their storage.
 *
 *   const d = new MessageDictionary();
 *   d.index("request.headers"); // 15
 *   d.index("JWT-Token");       // -1, words == ["JWT-Token"]
 */
export class MessageDictionary {
  words: Array<string> = [];
  /** Global words at or beyond this index are unknown to the peer. */
  globalWordCount: i32 = GLOBAL_WORD_COUNT;
  // Message words -> their (negative) index. A report batch can hold
  // thousands of distinct words, so a scan of `words` would be quadratic.
  private local: Map<string, i32> = new Map<string, i32>();

  constructor(globalWordCount: i32 = GLOBAL_WORD_COUNT) {
    this.reset(globalWordCount);
  }

  /** Forgets the message words; `globalWordCount` is clamped to the list we have. */
  reset(globalWordCount: i32 = GLOBAL_WORD_COUNT): void {
    this.globalWordCount = globalWordCount < 0 ? 0 : min(globalWordCount, GLOBAL_WORD_COUNT);
    if (this.words.length > 0) {
      this.words.length = 0;
      this.local.clear();
    }
  }

  /** Forgets the message words after the first `count` (an entry that was taken back). */
  truncate(count: i32): void {
    const words = this.words;
    const local = this.local;
    for (let i = words.length - 1; i >= count; i--) local.delete(unchecked(words[i]));
    words.length = count;
  }

  index(s: string): i32 {
    const g = globalWordIndex(s);
    if (g >= 0 && g < this.globalWordCount) return g;
    const local = this.local;
    if (local.has(s)) return local.get(s);
    const words = this.words;
    words.push(s);
    const i = -words.length;
    local.set(s, i);
    return i;
  }
}
