import { GLOBAL_WORD_COUNT, GLOBAL_WORDS } from "./global_words";
import { decodeUtf8 } from "../utf8";
import { NO_WORD, WordTable, asciiWordHash, wordHash } from "./word_table";

const RECENT_SLOTS: i32 = 256;

// Objects are 16-byte aligned: the address above those bits, mixed.
// @ts-ignore: decorator
@inline
function recentSlot(s: string): i32 {
  return <i32>(((<u32>changetype<usize>(s) >> 4) * 0x9e3779b1) >> 24);
}

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
  private local: WordTable = new WordTable(64);
  // Strings indexed since the last reset, by address: a report batch encodes
  // the same string objects over and over (interned attribute names, known
  // header names, shared values), so most lookups are one compare instead
  // of up to four hashes of the text. A slot holds its string, keeping it
  // alive, so an equal address is the same string; a slot counts only while
  // its stamp is the current one.
  private recent: StaticArray<string | null> = new StaticArray<string | null>(RECENT_SLOTS);
  private recentIndex: StaticArray<i32> = new StaticArray<i32>(RECENT_SLOTS);
  private recentStamp: StaticArray<u32> = new StaticArray<u32>(RECENT_SLOTS);
  private stamp: u32 = 1;

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
    this.forgetRecent();
  }

  /** Forgets the message words after the first `count` (an entry that was taken back). */
  truncate(count: i32): void {
    const words = this.words;
    const local = this.local;
    for (let i = words.length - 1; i >= count; i--) {
      const w = unchecked(words[i]);
      local.remove(w, wordHash(w));
    }
    words.length = count;
    this.forgetRecent();
  }

  // Inlined (a report's words are mostly found here by the string's address); the rest is `remembered`.
  // @ts-ignore: decorator
  @inline index(s: string): i32 {
    const slot = recentSlot(s);
    if (unchecked(this.recentStamp[slot]) == this.stamp && changetype<usize>(unchecked(this.recent[slot])) == changetype<usize>(s)) {
      return unchecked(this.recentIndex[slot]);
    }
    return this.remembered(s, slot);
  }

  // `index` of a string not found by its address: looked up, then remembered in `slot`.
  private remembered(s: string, slot: i32): i32 {
    const i = this.lookUp(s);
    unchecked((this.recent[slot] = s));
    unchecked((this.recentIndex[slot] = i));
    unchecked((this.recentStamp[slot] = this.stamp));
    return i;
  }

  /**
   * `index` of the text spelled by the `len` UTF-8 bytes at `ptr` (a header
   * name or value in place): ASCII bytes are hashed and compared as they
   * are, so a string is made only for a new message word, which the
   * dictionary keeps; other bytes are decoded first.
   */
  indexBytes(ptr: usize, len: usize): i32 {
    const hash = asciiWordHash(ptr, len);
    if (hash < 0) return this.index(decodeUtf8(ptr, len));
    const h = <u32>hash;
    const g = globalWords().findBytes(ptr, len, h);
    if (g != NO_WORD && g < this.globalWordCount) return g;
    const known = this.local.findBytes(ptr, len, h);
    return known != NO_WORD ? known : this.addWord(decodeUtf8(ptr, len), h);
  }

  private forgetRecent(): void {
    if (++this.stamp != 0) return;
    // Wrapped around: old stamps could match again.
    const stamps = this.recentStamp;
    for (let i = 0; i < RECENT_SLOTS; i++) unchecked((stamps[i] = 0));
    this.stamp = 1;
  }

  // One hash of the text serves both tables.
  private lookUp(s: string): i32 {
    const h = wordHash(s);
    const g = globalWords().find(s, h);
    if (g != NO_WORD && g < this.globalWordCount) return g;
    const known = this.local.find(s, h);
    return known != NO_WORD ? known : this.addWord(s, h);
  }

  // A message word: the next negative index, in first-use order.
  private addWord(s: string, h: u32): i32 {
    const words = this.words;
    words.push(s);
    const i = -words.length;
    this.local.add(s, h, i);
    return i;
  }
}

// The global words by text, built on first use (a module that never talks to
// the hub does not pay for it) and never changed afterwards. "0", "1" and
// "200" are listed twice (111/134, 112/135, 94/136): the first index wins, as
// in host/wire/compressed.ts, and a peer with a shorter prefix knows it too.
let globalTable: WordTable | null = null;

function globalWords(): WordTable {
  let table = globalTable;
  if (table === null) {
    table = new WordTable(GLOBAL_WORDS.length);
    for (let i = 0; i < GLOBAL_WORDS.length; i++) {
      const w = unchecked(GLOBAL_WORDS[i]);
      const h = wordHash(w);
      if (table.find(w, h) == NO_WORD) table.add(w, h, i);
    }
    globalTable = table;
  }
  return table;
}

/** The global index of `s`, or -1 if it is not a global word (`"request.headers"` -> 15). */
export function globalWordIndex(s: string): i32 {
  const i = globalWords().find(s, wordHash(s));
  return i == NO_WORD ? -1 : i;
}
