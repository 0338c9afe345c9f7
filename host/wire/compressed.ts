import type Long from "long";

/**
 * CompressedAttributes (proto/mesh/hub/v1/attributes.proto) ⇄ an attribute map.
 *
 * Every string of a compressed message (attribute name, string value, map key,
 * map value) is an index: i >= 0 is word i of the global word list, i < 0 is
 * word (-i - 1) of the message's `words` (or of a report's `default_words`).
 * See shared/research/hub-client.md §9.2.
 */

/** Seconds and nanoseconds, as Timestamp and Duration carry them. */
export interface Instant {
  seconds: bigint;
  nanos: number;
}

/**
 * One attribute value, in the member names of `mesh.hub.v1.AttributeValue`
 * (so `attributesToJson` in attribute_json.ts prints it directly).
 */
export type AttributeValue =
  | { stringValue: string }
  | { int64Value: bigint }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { bytesValue: Uint8Array }
  | { timestampValue: Instant }
  | { durationValue: Instant }
  | { stringMapValue: { entries: Record<string, string> } };

/** Attributes of one request, by name. */
export type AttributeMap = Map<string, AttributeValue>;

/** What reads attributes by name only needs: a map, or a view of a decoded report entry (report_slots_reader.ts). */
export interface AttributeLookup {
  get(name: string): AttributeValue | undefined;
  /**
   * The attribute as the standard metrics count it (an int64 as a number, a
   * duration in milliseconds, an absent one as 0), where the lookup has it
   * without making its value; undefined: count get()'s value.
   */
  count?(name: string): number | undefined;
}

type Int64Like = number | string | bigint | Long;
interface InstantLike {
  seconds?: Int64Like | null;
  nanos?: number | null;
}

/** A `mesh.hub.v1.CompressedAttributes` as protobufjs decodes it (map keys are decimal strings). */
export interface CompressedAttributesMessage {
  words?: string[] | null;
  strings?: Record<string, number> | null;
  int64s?: Record<string, Int64Like> | null;
  doubles?: Record<string, number> | null;
  bools?: Record<string, boolean> | null;
  timestamps?: Record<string, InstantLike> | null;
  durations?: Record<string, InstantLike> | null;
  bytes?: Record<string, Uint8Array> | null;
  stringMaps?: Record<string, { entries?: Record<string, number> | null } | null> | null;
}

/** A CompressedAttributes ready for `Type.encode` (int64 members as decimal strings). */
export interface CompressedAttributesObject {
  words?: string[];
  strings?: Record<string, number>;
  int64s?: Record<string, string>;
  doubles?: Record<string, number>;
  bools?: Record<string, boolean>;
  timestamps?: Record<string, { seconds: string; nanos: number }>;
  durations?: Record<string, { seconds: string; nanos: number }>;
  bytes?: Record<string, Uint8Array>;
  stringMaps?: Record<string, { entries: Record<string, number> }>;
}

/** An index that names no word, or a malformed member. Code `ATTRIBUTES_INVALID`. */
export class AttributeDecodeError extends Error {
  readonly code = "ATTRIBUTES_INVALID";
  constructor(message: string) {
    super(message);
    this.name = "AttributeDecodeError";
  }
}

/** The global word list plus a reverse index, built once per list. */
export class GlobalDictionary {
  readonly index: ReadonlyMap<string, number>;
  constructor(readonly words: readonly string[]) {
    const index = new Map<string, number>();
    words.forEach((w, i) => {
      if (!index.has(w)) index.set(w, i);
    });
    this.index = index;
  }

  get size(): number {
    return this.words.length;
  }
}

export interface DecodeOptions {
  dictionary: GlobalDictionary;
  /** Words for negative indexes when the message carries none of its own (a report's `default_words`). */
  defaultWords?: readonly string[];
}

class WordLookup {
  constructor(
    private readonly global: readonly string[],
    private readonly local: readonly string[],
  ) {}

  word(index: number, what: string): string {
    if (index >= 0) {
      const w = this.global[index];
      if (w === undefined) {
        throw new AttributeDecodeError(`${what} ${index} is not a global word (the hub knows ${this.global.length}: 0..${this.global.length - 1})`);
      }
      return w;
    }
    const w = this.local[-index - 1];
    if (w === undefined) {
      throw new AttributeDecodeError(
        `${what} ${index} is not a message word (the message has ${this.local.length}${this.local.length ? `: -1..-${this.local.length}` : ""})`,
      );
    }
    return w;
  }

  key(text: string, what: string): string {
    const index = Number(text);
    if (!Number.isInteger(index)) throw new AttributeDecodeError(`${what} key ${JSON.stringify(text)} is not an integer`);
    return this.word(index, what);
  }
}

function toBigInt(v: Int64Like | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) throw new AttributeDecodeError(`int64 value ${v} is not an integer`);
    return BigInt(v);
  }
  return BigInt(v.toString());
}

function instant(v: InstantLike | null | undefined): Instant {
  return { seconds: toBigInt(v?.seconds), nanos: v?.nanos ?? 0 };
}

function each<T>(record: Record<string, T> | null | undefined, fn: (key: string, value: T) => void): void {
  if (!record) return;
  for (const key of Object.keys(record)) fn(key, record[key]);
}

/**
 * Decodes `message` onto `target` (a new map by default). Applying several
 * messages to one map is DELTA_ENCODING: later sets overwrite earlier values.
 * Throws AttributeDecodeError naming the member and the bad index, e.g.
 * `strings: attribute name 900 is not a global word (the hub knows 222: 0..221)`.
 */
export function decodeAttributes(
  message: CompressedAttributesMessage | null | undefined,
  options: DecodeOptions,
  target: AttributeMap = new Map(),
): AttributeMap {
  if (!message) return target;
  const own = message.words ?? [];
  const words = new WordLookup(options.dictionary.words, own.length > 0 ? own : (options.defaultWords ?? []));
  const name = (member: string, key: string) => words.key(key, `${member}: attribute name`);
  each(message.strings, (k, v) => {
    const n = name("strings", k);
    target.set(n, { stringValue: words.word(v, `strings: value of ${n}`) });
  });
  each(message.int64s, (k, v) => target.set(name("int64s", k), { int64Value: toBigInt(v) }));
  each(message.doubles, (k, v) => target.set(name("doubles", k), { doubleValue: v }));
  each(message.bools, (k, v) => target.set(name("bools", k), { boolValue: v }));
  each(message.timestamps, (k, v) => target.set(name("timestamps", k), { timestampValue: instant(v) }));
  each(message.durations, (k, v) => target.set(name("durations", k), { durationValue: instant(v) }));
  each(message.bytes, (k, v) => target.set(name("bytes", k), { bytesValue: v }));
  each(message.stringMaps, (k, v) => {
    const n = name("string_maps", k);
    const entries: Record<string, string> = Object.create(null); // a key "__proto__" is data, not a prototype
    each(v?.entries, (ek, ev) => {
      entries[words.key(ek, `string_maps: key in ${n}`)] = words.word(ev, `string_maps: value in ${n}`);
    });
    target.set(n, { stringMapValue: { entries } });
  });
  return target;
}

/**
 * Assigns message-level word indexes (-1, -2, … in first-use order) to strings
 * that are not global words the peer knows. One table may be shared by all
 * entries of a report (its `default_words`).
 */
export class MessageWords {
  readonly words: string[] = [];
  private readonly byWord = new Map<string, number>();

  /**
   * @param dictionary the global words
   * @param globalWordCount how many global words the peer knows (a prefix of ours); words beyond it go to the message list
   */
  constructor(
    private readonly dictionary: GlobalDictionary,
    private readonly globalWordCount: number = dictionary.size,
  ) {}

  indexOf(word: string): number {
    const g = this.dictionary.index.get(word);
    if (g !== undefined && g < this.globalWordCount) return g;
    let local = this.byWord.get(word);
    if (local === undefined) {
      this.words.push(word);
      local = -this.words.length;
      this.byWord.set(word, local);
    }
    return local;
  }
}

function instantObject(v: Instant): { seconds: string; nanos: number } {
  return { seconds: v.seconds.toString(), nanos: v.nanos };
}

/**
 * Encodes an attribute map. With `shared` (a report's default_words table)
 * the result carries no `words` of its own; otherwise it gets a fresh table.
 */
export function encodeAttributes(attributes: AttributeMap, dictionary: GlobalDictionary, shared?: MessageWords): CompressedAttributesObject {
  const words = shared ?? new MessageWords(dictionary);
  const out: CompressedAttributesObject = {};
  const put = (member: Exclude<keyof CompressedAttributesObject, "words">, key: number, value: unknown) => {
    const record = (out[member] ??= {}) as Record<string, unknown>;
    record[String(key)] = value;
  };
  for (const [name, v] of attributes) {
    const n = words.indexOf(name);
    if ("stringValue" in v) put("strings", n, words.indexOf(v.stringValue));
    else if ("int64Value" in v) put("int64s", n, v.int64Value.toString());
    else if ("doubleValue" in v) put("doubles", n, v.doubleValue);
    else if ("boolValue" in v) put("bools", n, v.boolValue);
    else if ("bytesValue" in v) put("bytes", n, v.bytesValue);
    else if ("timestampValue" in v) put("timestamps", n, instantObject(v.timestampValue));
    else if ("durationValue" in v) put("durations", n, instantObject(v.durationValue));
    else {
      const entries: Record<string, number> = {};
      for (const [k, val] of Object.entries(v.stringMapValue.entries)) entries[String(words.indexOf(k))] = words.indexOf(val);
      put("stringMaps", n, { entries });
    }
  }
  if (!shared && words.words.length > 0) out.words = words.words;
  return out;
}

/**
 * The text form of a value for list and dimension comparisons: strings as
 * they are, int64 in decimal, doubles as JavaScript prints them, bools as
 * `true`/`false`; undefined for bytes, times and maps (they never compare equal to text).
 */
export function attributeText(v: AttributeValue): string | undefined {
  if ("stringValue" in v) return v.stringValue;
  if ("int64Value" in v) return v.int64Value.toString();
  if ("doubleValue" in v) return String(v.doubleValue);
  if ("boolValue" in v) return v.boolValue ? "true" : "false";
  return undefined;
}
