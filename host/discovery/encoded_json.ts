import { packJson, TYPE_URL_PREFIX } from "../wire/envoy_protos.ts";

/**
 * packJson, remembered from one configuration version to the next: a change
 * re-derives every Envoy resource of every view, and most come out the same
 * as in the version before (one service's endpoints moved: the 100 clusters
 * did not). Encoding proto3 JSON walks the message types field by field; its
 * JSON text is a much cheaper key. The bytes are shared, never changed (an
 * Any's value is only ever copied into responses). A version keeps what it
 * encoded and what the version before it did, nothing older.
 */
export class EncodedJson {
  private readonly encoded = new Map<string, Uint8Array>();
  private readonly before: ReadonlyMap<string, Uint8Array>;

  /** `previous`: the encodings of the version served before this one. */
  constructor(previous?: EncodedJson) {
    this.before = previous?.encoded ?? new Map();
  }

  pack(typeName: string, json: Record<string, unknown>): { type_url: string; value: Uint8Array } {
    const key = `${typeName}\0${JSON.stringify(json)}`;
    const known = this.encoded.get(key) ?? this.before.get(key);
    const any = known ? { type_url: TYPE_URL_PREFIX + typeName, value: known } : packJson(typeName, json);
    if (!this.encoded.has(key)) this.encoded.set(key, any.value);
    return any;
  }
}

/**
 * Values made from a key, remembered from one configuration version to the
 * next as EncodedJson is: a version keeps what it made and what the version
 * before it did, nothing older. The key must say everything the value is
 * made from.
 */
export class VersionMemo<V> {
  private readonly made = new Map<string, V>();
  private readonly before: ReadonlyMap<string, V>;

  constructor(previous?: VersionMemo<V>) {
    this.before = previous?.made ?? new Map();
  }

  get(key: string, make: () => V): V {
    let v = this.made.get(key) ?? this.before.get(key);
    if (v === undefined) v = make();
    this.made.set(key, v);
    return v;
  }
}
