import { AttributeBag } from "../attributes/bag";
import { ProtoWriter } from "../proto/writer";
import { QuotaCharge } from "../quota";
import { CompressedAttributesWriter } from "./compressed_attributes";
import { MessageDictionary } from "./dictionary";

// mesh.hub.v1.CheckRequest and QuotaParams field numbers (proto/mesh/hub/v1/hub.proto).
const ATTRIBUTES: u32 = 1;
const GLOBAL_WORD_COUNT: u32 = 2;
const DEDUPLICATION_ID: u32 = 3;
const QUOTAS: u32 = 4;
const AMOUNT: u32 = 1;
const BEST_EFFORT: u32 = 2;

/**
 * Encodes mesh.hub.v1.CheckRequest messages, keeping its writers and its
 * dictionary between requests (one encoder per filter context is enough).
 */
export class CheckRequestEncoder {
  private out: ProtoWriter = new ProtoWriter(512);
  private attributes: ProtoWriter = new ProtoWriter(512);
  private entry: ProtoWriter = new ProtoWriter(64);
  private params: ProtoWriter = new ProtoWriter(16);
  private compressed: CompressedAttributesWriter = new CompressedAttributesWriter();
  private dictionary: MessageDictionary = new MessageDictionary();
  private quotaNames: Array<string> = [];
  private quotaAmounts: Array<i64> = [];

  /** See encodeCheckRequest. */
  encode(
    bag: AttributeBag,
    globalWordCount: i32,
    deduplicationId: string,
    quotas: Array<QuotaCharge>,
    bestEffort: bool,
  ): Uint8Array {
    const dictionary = this.dictionary;
    dictionary.reset(globalWordCount);
    const out = this.out;
    out.reset();

    const attributes = this.attributes;
    attributes.reset();
    this.compressed.write(attributes, bag, dictionary, true);
    // Always present, even for an empty bag: the attributes are the request.
    out.messageField(ATTRIBUTES, attributes);
    // The clamped count: the hub must not assume words we do not have.
    if (dictionary.globalWordCount != 0) out.uint64Field(GLOBAL_WORD_COUNT, <u64>dictionary.globalWordCount);
    if (deduplicationId.length > 0) out.stringField(DEDUPLICATION_ID, deduplicationId);
    this.writeQuotas(out, quotas, bestEffort);
    return out.finish();
  }

  // CheckRequest.quotas is a map keyed by quota name, so a name charged by
  // several rules (quotaCharges does not de-duplicate, as upstream) must
  // become one entry: the amounts are summed, in first-charge order. Sending
  // the same key twice would make the hub keep only the last amount.
  private writeQuotas(out: ProtoWriter, quotas: Array<QuotaCharge>, bestEffort: bool): void {
    const names = this.quotaNames;
    const amounts = this.quotaAmounts;
    names.length = 0;
    amounts.length = 0;
    for (let i = 0, n = quotas.length; i < n; i++) {
      const q = unchecked(quotas[i]);
      const at = names.indexOf(q.quota);
      if (at >= 0) unchecked((amounts[at] = unchecked(amounts[at]) + q.charge));
      else {
        names.push(q.quota);
        amounts.push(q.charge);
      }
    }
    const entry = this.entry;
    const params = this.params;
    for (let i = 0, n = names.length; i < n; i++) {
      params.reset();
      const amount = unchecked(amounts[i]);
      if (amount != 0) params.int64Field(AMOUNT, amount);
      if (bestEffort) params.boolField(BEST_EFFORT, true);
      entry.reset();
      entry.stringField(1, unchecked(names[i]));
      entry.messageField(2, params);
      out.messageField(QUOTAS, entry);
    }
  }
}

/**
 * The bytes of a mesh.hub.v1.CheckRequest: `bag` compressed with its own
 * message words, `globalWordCount` global words assumed known to the hub
 * (clamped to GLOBAL_WORD_COUNT), the quotas merged by name, every quota
 * with the same `bestEffort`.
 *
 *   encodeCheckRequest(bag, GLOBAL_WORD_COUNT, "uuid-1", [new QuotaCharge("rq", 1)], false)
 */
export function encodeCheckRequest(
  bag: AttributeBag,
  globalWordCount: i32,
  deduplicationId: string,
  quotas: Array<QuotaCharge>,
  bestEffort: bool,
): Uint8Array {
  return sharedEncoder.encode(bag, globalWordCount, deduplicationId, quotas, bestEffort);
}

// One encoder for every check and prefetch: encode() is never re-entered and
// returns a copy of its buffer, so its writers and dictionary keep their
// storage from message to message.
const sharedEncoder = new CheckRequestEncoder();
