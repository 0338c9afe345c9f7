// The hub's fast path for mesh.hub.v1.CheckRequest bytes: one pass over the
// wire format, its attributes straight into an attribute map, without
// protobufjs's message objects or a second walk to find invalid UTF-8.
//
// It takes only plainly well-formed requests: known fields with their wire
// types, the attributes given at most once, each quota's name and
// parameters at most once per map entry, every string valid UTF-8, every
// index naming a word, lengths within their message. Anything else returns
// undefined, and the caller takes the general path (utf8_strings.ts,
// protobufjs, decodeAttributes), which words every refusal. So when this
// reader answers, it answers what the general path would: the same
// attribute map in the same order (compressed_attributes_reader.ts), the
// same global word count and deduplication id (defaults 0 and ""), and the
// same quotas (a name given again takes the later parameters).

import type { AttributeMap, GlobalDictionary } from "./compressed.ts";
import { AttributesReader } from "./compressed_attributes_reader.ts";
import { NOT_PLAIN, WIRE_LEN, WIRE_VARINT } from "./strict_wire_cursor.ts";

/** One requested quota's parameters (`mesh.hub.v1.QuotaParams`), amount as a number. */
export interface PlainQuotaParams {
  amount: number;
  bestEffort: boolean;
}

/** A plainly well-formed CheckRequest. */
export interface PlainCheck {
  attributes: AttributeMap;
  globalWordCount: number;
  deduplicationId: string;
  /** By quota name; a plain object, as protobufjs decodes the map. */
  quotas: Record<string, PlainQuotaParams>;
}

// Tags (field number and wire type) of CheckRequest, of a quotas map entry and of QuotaParams (proto/mesh/hub/v1/hub.proto).
const ATTRIBUTES = (1 << 3) | WIRE_LEN;
const GLOBAL_WORD_COUNT = (2 << 3) | WIRE_VARINT;
const DEDUPLICATION_ID = (3 << 3) | WIRE_LEN;
const QUOTAS = (4 << 3) | WIRE_LEN;
const QUOTA_NAME = (1 << 3) | WIRE_LEN;
const QUOTA_PARAMS = (2 << 3) | WIRE_LEN;
const AMOUNT = (1 << 3) | WIRE_VARINT;
const BEST_EFFORT = (2 << 3) | WIRE_VARINT;
/** A varint of 10 bytes: its bits past 64 are where protobufjs and the cursor may differ (a bool). */
const LONGEST_PLAIN_BOOL = 9;
const NO_WORDS: readonly string[] = [];

/** The CheckRequest's fields, or undefined: take the general path. */
export function readPlainCheck(bytes: Buffer, dictionary: GlobalDictionary): PlainCheck | undefined {
  try {
    return readCheck(new AttributesReader(bytes, dictionary.words, undefined));
  } catch (e) {
    if (e === NOT_PLAIN) return undefined;
    throw e;
  }
}

function readCheck(r: AttributesReader): PlainCheck {
  const end = r.buf.length;
  let from = -1;
  let to = -1;
  let globalWordCount = 0;
  let deduplicationId = "";
  const quotas: Record<string, PlainQuotaParams> = {};
  while (r.pos < end) {
    const tag = r.varint(end);
    if (tag === ATTRIBUTES && from === -1) {
      to = r.length(end);
      from = r.pos;
      r.pos = to;
    } else if (tag === GLOBAL_WORD_COUNT) {
      globalWordCount = r.varint(end);
    } else if (tag === DEDUPLICATION_ID) {
      deduplicationId = r.string(r.length(end));
    } else if (tag === QUOTAS) {
      readQuota(r, r.length(end), quotas);
    } else {
      throw NOT_PLAIN;
    }
  }
  const attributes = from === -1 ? new Map() : r.entry(from, to, NO_WORDS, new Map());
  return { attributes, globalWordCount, deduplicationId, quotas };
}

/** One entry {name = 1, params = 2} of the quotas map, ending at `end`; a missing name is "", missing parameters are zero. */
function readQuota(r: AttributesReader, end: number, quotas: Record<string, PlainQuotaParams>): void {
  let name: string | undefined;
  let params: PlainQuotaParams | undefined;
  while (r.pos < end) {
    const tag = r.varint(end);
    if (tag === QUOTA_NAME && name === undefined) name = r.string(r.length(end));
    else if (tag === QUOTA_PARAMS && params === undefined) params = readParams(r, r.length(end));
    else throw NOT_PLAIN;
  }
  name ??= "";
  // protobufjs makes "__proto__" an own property; the general path decides what that means.
  if (name === "__proto__") throw NOT_PLAIN;
  quotas[name] = params ?? { amount: 0, bestEffort: false };
}

/** QuotaParams {amount = 1: int64, best_effort = 2: bool}, each at most once. */
function readParams(r: AttributesReader, end: number): PlainQuotaParams {
  let amount: number | undefined;
  let bestEffort: boolean | undefined;
  while (r.pos < end) {
    const tag = r.varint(end);
    if (tag === AMOUNT && amount === undefined) amount = Number(r.int64(end));
    else if (tag === BEST_EFFORT && bestEffort === undefined) {
      const start = r.pos;
      bestEffort = r.bool(end);
      if (r.pos - start > LONGEST_PLAIN_BOOL) throw NOT_PLAIN;
    } else throw NOT_PLAIN;
  }
  return { amount: amount ?? 0, bestEffort: bestEffort ?? false };
}
