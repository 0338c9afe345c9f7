import { packJson, TYPE_URL_PREFIX } from "../wire/envoy_protos.ts";

/**
 * packJson, remembered: a configuration change re-derives every Envoy
 * resource of every view, and most come out the same as in the version
 * before (one service's endpoints moved: the 100 clusters did not).
 * Encoding proto3 JSON walks the message types field by field; its JSON text
 * is a much cheaper key. The bytes are shared, never changed (an Any's value
 * is only ever copied into responses). Two generations of at most
 * `GENERATION` entries: what the last versions encoded stays, the rest goes.
 */
const GENERATION = 20_000;
let current = new Map<string, Uint8Array>();
let previous = new Map<string, Uint8Array>();

export function packJsonOnce(typeName: string, json: Record<string, unknown>): { type_url: string; value: Uint8Array } {
  const key = `${typeName}\0${JSON.stringify(json)}`;
  const known = current.get(key) ?? previous.get(key);
  const any = known ? { type_url: TYPE_URL_PREFIX + typeName, value: known } : packJson(typeName, json);
  if (!current.has(key)) {
    if (current.size >= GENERATION) {
      previous = current;
      current = new Map();
    }
    current.set(key, any.value);
  }
  return any;
}
