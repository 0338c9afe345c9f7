import { AttributeBag } from "../attributes/bag";
import { ProtoWriter } from "../proto/writer";
import { writeReportEntry, writeWords } from "./compressed_attributes";
import { MessageDictionary } from "./dictionary";
import { EntryMemo } from "./entry_memo";

// mesh.hub.v1.ReportRequest field numbers (proto/mesh/hub/v1/hub.proto).
const ATTRIBUTES: u32 = 1;
const DEFAULT_WORDS: u32 = 2;
const GLOBAL_WORD_COUNT: u32 = 3;
const REPEATED_ATTRIBUTES_SEMANTICS: u32 = 4;
const INDEPENDENT_ENCODING: u64 = 1;
// What follows the words: global_word_count and repeated_attributes_semantics (tags and varints).
const TRAILER_BYTES: i32 = 8;

/**
 * Encodes mesh.hub.v1.ReportRequest messages one entry at a time, keeping its
 * writers and its dictionary between messages: a report is encoded when the
 * request ends (`append`), and the batch only adds its words and trailer
 * when it is sent (`finish`), so no attribute bag has to outlive its request.
 *
 *   const encoder = new ReportRequestEncoder();
 *   encoder.begin(GLOBAL_WORD_COUNT);
 *   encoder.append(bag, 512 * 1024); // true: the entry is in the message
 *   const bytes = encoder.finish();
 */
export class ReportRequestEncoder {
  private out: ProtoWriter = new ProtoWriter(2048);
  // The attributes already encoded in the message, copied when a later entry repeats them.
  private memo: EntryMemo = new EntryMemo();
  private dictionary: MessageDictionary = new MessageDictionary();
  private count: i32 = 0;
  // The encoded size of the message words so far (`default_words` fields).
  private wordBytes: i32 = 0;

  /** Entries in the message being built. */
  get entries(): i32 {
    return this.count;
  }

  /** Starts a new message (its dictionary empty) for a peer that knows `globalWordCount` global words. */
  begin(globalWordCount: i32): void {
    this.dictionary.reset(globalWordCount);
    this.memo.reset();
    this.out.reset();
    this.count = 0;
    this.wordBytes = 0;
  }

  /**
   * Appends `bag` as one entry. When the message already has entries and
   * this one would make it longer than `maxBytes`, nothing is appended (the
   * dictionary is left as it was) and false is returned: finish the message
   * and append the entry to the next. A first entry always goes in.
   */
  append(bag: AttributeBag, maxBytes: i32): bool {
    const dictionary = this.dictionary;
    const wordsBefore = dictionary.words.length;
    const out = this.out;
    const before = out.length;
    // Two bytes kept for the entry's length (most entries are 128 bytes to 16 KiB).
    const entry = out.beginWide(ATTRIBUTES);
    const memo = this.memo;
    memo.startEntry();
    writeReportEntry(out, bag, dictionary, memo);
    // A length of another size moved the entry's contents.
    const moved = out.endWide(entry);
    if (moved != 0) memo.entryMoved(moved);
    const words = dictionary.words;
    let addedWordBytes = 0;
    for (let i = wordsBefore, n = words.length; i < n; i++) addedWordBytes += stringFieldLength(unchecked(words[i]));
    if (this.count > 0 && out.length + this.wordBytes + addedWordBytes + TRAILER_BYTES > maxBytes) {
      // Taken back whole: the entry and the words it added.
      out.rewind(before);
      dictionary.truncate(wordsBefore);
      // What it remembered points into the bytes taken back.
      this.memo.reset();
      return false;
    }
    this.wordBytes += addedWordBytes;
    this.count++;
    return true;
  }

  /** The bytes of the message built since `begin`; the encoder then needs a `begin` again. */
  finish(): Uint8Array {
    const out = this.out;
    const dictionary = this.dictionary;
    writeWords(out, DEFAULT_WORDS, dictionary.words);
    if (dictionary.globalWordCount != 0) out.uint64Field(GLOBAL_WORD_COUNT, <u64>dictionary.globalWordCount);
    out.uint64Field(REPEATED_ATTRIBUTES_SEMANTICS, INDEPENDENT_ENCODING);
    const bytes = out.finish();
    out.reset();
    this.memo.reset();
    this.count = 0;
    return bytes;
  }

  /** A whole batch at once: see encodeReportRequest. */
  encode(bags: Array<AttributeBag>, globalWordCount: i32): Uint8Array {
    this.begin(globalWordCount);
    for (let i = 0, n = bags.length; i < n; i++) this.append(unchecked(bags[i]), i32.MAX_VALUE);
    return this.finish();
  }
}

// Bytes of a length-delimited field (tag of a field below 16, length varint, payload).
function fieldLength(payload: i32): i32 {
  return 1 + varintLength(<u32>payload) + payload;
}

function stringFieldLength(s: string): i32 {
  return fieldLength(String.UTF8.byteLength(s));
}

function varintLength(v: u32): i32 {
  let n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/**
 * The bytes of a mesh.hub.v1.ReportRequest for a batch of finished requests.
 * As upstream since 2018 (hub-client.md §9.1): INDEPENDENT_ENCODING (every
 * entry complete), one dictionary for the whole batch in `default_words`, no
 * per-entry `words`, so a word repeated across requests is sent once.
 *
 *   encodeReportRequest([bagA, bagB], GLOBAL_WORD_COUNT)
 */
export function encodeReportRequest(bags: Array<AttributeBag>, globalWordCount: i32): Uint8Array {
  return new ReportRequestEncoder().encode(bags, globalWordCount);
}
