import type { HeaderList } from "./abi_types.ts";
import { pairsLength, writePairs } from "./pairs.ts";

/**
 * One header map of a stream (request or response headers, trailers) as the
 * module sees it: names lower-case, order and repeats kept. A read writes its
 * proxy-wasm serialization straight into module memory (the module reads
 * each map once per request: nothing is kept). Changes replace
 * the pair list rather than edit it: a list the embedder handed in or read
 * back is never modified under it.
 */
export class HeaderMap {
  constructor(private entries: HeaderList) {}

  /** Pairs as given, when every name is already lower-case (no copy); lower-cased otherwise. */
  static of(pairs: HeaderList): HeaderMap {
    for (const [name] of pairs) if (name !== name.toLowerCase()) return new HeaderMap(pairs.map(([k, v]) => [k.toLowerCase(), v]));
    return new HeaderMap(pairs);
  }

  get pairs(): HeaderList {
    return this.entries;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The size of the serialized map (proxy-wasm pairs). */
  serializedLength(): number {
    return pairsLength(this.entries);
  }

  /** Writes the serialized map into `out` at `at` (serializedLength bytes): straight into module memory, with no buffer in between. */
  writeTo(out: Buffer, at: number): void {
    writePairs(out, at, this.entries);
  }

  /** The first value of `name` (lower-case). */
  get(name: string): string | undefined {
    for (const [k, v] of this.entries) if (k === name) return v;
    return undefined;
  }

  setAll(pairs: HeaderList): void {
    this.entries = pairs;
  }

  add(name: string, value: string): void {
    this.setAll([...this.entries, [name, value]]);
  }

  /** The first `name` takes `value` and later ones go; appended when absent. */
  replace(name: string, value: string): void {
    const at = this.entries.findIndex(([k]) => k === name);
    if (at < 0) return this.add(name, value);
    const out: HeaderList = [];
    for (let i = 0; i < this.entries.length; i++) {
      if (i === at) out.push([name, value]);
      else if (this.entries[i][0] !== name) out.push(this.entries[i]);
    }
    this.setAll(out);
  }

  remove(name: string): void {
    this.setAll(this.entries.filter(([k]) => k !== name));
  }
}
