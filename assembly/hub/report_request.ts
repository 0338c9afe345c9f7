import { AttributeBag } from "../attributes/bag";
import { ProtoWriter } from "../proto/writer";
import { CompressedAttributesWriter, writeWords } from "./compressed_attributes";
import { MessageDictionary } from "./dictionary";

// mesh.hub.v1.ReportRequest field numbers (proto/mesh/hub/v1/hub.proto).
const ATTRIBUTES: u32 = 1;
const DEFAULT_WORDS: u32 = 2;
const GLOBAL_WORD_COUNT: u32 = 3;
const REPEATED_ATTRIBUTES_SEMANTICS: u32 = 4;
const INDEPENDENT_ENCODING: u64 = 1;

/**
 * Encodes mesh.hub.v1.ReportRequest batches, keeping its writers and its
 * dictionary between batches.
 */
export class ReportRequestEncoder {
  private out: ProtoWriter = new ProtoWriter(2048);
  private entry: ProtoWriter = new ProtoWriter(512);
  private compressed: CompressedAttributesWriter = new CompressedAttributesWriter();
  private dictionary: MessageDictionary = new MessageDictionary();

  /** See encodeReportRequest. */
  encode(bags: Array<AttributeBag>, globalWordCount: i32): Uint8Array {
    const dictionary = this.dictionary;
    dictionary.reset(globalWordCount);
    const out = this.out;
    out.reset();
    const entry = this.entry;
    for (let i = 0, n = bags.length; i < n; i++) {
      entry.reset();
      this.compressed.write(entry, unchecked(bags[i]), dictionary, false);
      out.messageField(ATTRIBUTES, entry);
    }
    writeWords(out, DEFAULT_WORDS, dictionary.words);
    if (dictionary.globalWordCount != 0) out.uint64Field(GLOBAL_WORD_COUNT, <u64>dictionary.globalWordCount);
    out.uint64Field(REPEATED_ATTRIBUTES_SEMANTICS, INDEPENDENT_ENCODING);
    return out.finish();
  }
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
