import type { HeaderList } from "./abi_types.ts";
import { pairsCapacity, pairsLength, writePairs } from "./pairs.ts";
import type { PairsCache } from "./pairs_cache.ts";

/**
 * One header map of a stream (request or response headers, trailers) as the
 * module sees it: names lower-case, order and repeats kept. A read writes its
 * proxy-wasm serialization straight into module memory (the module reads
 * each map once per request: nothing is kept). A list the embedder handed in
 * or read back is never modified under it: the first change copies it, and
 * later changes edit that copy in place until the embedder reads it.
 */
export class HeaderMap {
  /** True while `entries` is this map's own copy, which no embedder holds. */
  private owned = false;

  constructor(private entries: HeaderList) {}

  /** Pairs as given, when every name is already lower-case (no copy); lower-cased otherwise. */
  static of(pairs: HeaderList): HeaderMap {
    for (const [name] of pairs) if (name !== name.toLowerCase()) return new HeaderMap(pairs.map(([k, v]) => [k.toLowerCase(), v]));
    return new HeaderMap(pairs);
  }

  get pairs(): HeaderList {
    this.owned = false;
    return this.entries;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The exact size of the serialized map (proxy-wasm pairs). */
  serializedLength(): number {
    return pairsLength(this.entries);
  }

  /** Room enough for the serialized map: what writeTo may write. */
  serializedCapacity(): number {
    return pairsCapacity(this.entries);
  }

  /**
   * Writes the serialized map into `out` at `at` (room for serializedCapacity
   * bytes): straight into module memory, with no buffer in between; through
   * `cache` (the last map of its kind) when given. Returns the bytes written.
   */
  writeTo(out: Buffer, at: number, cache?: PairsCache): number {
    return cache === undefined ? writePairs(out, at, this.entries) : cache.write(out, at, this.entries);
  }

  /** The first value of `name` (lower-case). */
  get(name: string): string | undefined {
    for (const [k, v] of this.entries) if (k === name) return v;
    return undefined;
  }

  setAll(pairs: HeaderList): void {
    this.entries = pairs;
    this.owned = false;
  }

  add(name: string, value: string): void {
    if (this.owned) {
      this.entries.push([name, value]);
      return;
    }
    // The copy made at its final size: copying, then pushing, would allocate
    // its backing store twice (push grows a full array by half again).
    const from = this.entries;
    const n = from.length;
    const copy: HeaderList = new Array(n + 1);
    for (let i = 0; i < n; i++) copy[i] = from[i];
    copy[n] = [name, value];
    this.entries = copy;
    this.owned = true;
  }

  /** The first `name` takes `value` and later ones go; appended when absent. */
  replace(name: string, value: string): void {
    // Plain loops: no closure or iterator per call (the module replaces a header in every request).
    const found = this.entries;
    let at = 0;
    while (at < found.length && found[at][0] !== name) at++;
    if (at === found.length) return this.add(name, value);
    const entries = this.own();
    entries[at] = [name, value];
    for (let i = entries.length - 1; i > at; i--) if (entries[i][0] === name) entries.splice(i, 1);
  }

  remove(name: string): void {
    if (!this.entries.some(([k]) => k === name)) return;
    this.entries = this.entries.filter(([k]) => k !== name);
    this.owned = true;
  }

  private own(): HeaderList {
    if (!this.owned) {
      this.entries = this.entries.slice();
      this.owned = true;
    }
    return this.entries;
  }
}
