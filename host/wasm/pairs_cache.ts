import { writeString, writeU32 } from "./pairs.ts";

/** Serializations longer than this are not kept (nor the strings they were made from). */
const MAX_KEPT_BYTES = 16 * 1024;
const NO_BYTES = new Uint8Array();

/**
 * The last serialization of one kind of header map (a VM's request headers,
 * its response headers), kept with the strings it was made from. Requests
 * repeat most of their headers (on a connection, and across connections of
 * the same clients): an entry equal to the one at the same place last time
 * takes its bytes from there, in one copy per run of such entries (one copy
 * for the whole map when every entry is equal), instead of being encoded a
 * character at a time. Equal strings have equal UTF-8 bytes: the output is
 * exactly what writePairs writes.
 */
export class PairsCache {
  /** Entries in the kept serialization; -1 when none is kept. */
  private count = -1;
  private names: string[] = [];
  private values: string[] = [];
  private nameLengths: number[] = [];
  private valueLengths: number[] = [];
  /** Where entry i's `name NUL value NUL` starts in `bytes`; starts[count] is the end. */
  private starts: number[] = [];
  private bytes: Uint8Array = NO_BYTES;

  /** Serializes `entries` into `out` at `at` (room for pairsCapacity bytes) as writePairs does; returns the bytes written. */
  write(out: Buffer, at: number, entries: ReadonlyArray<readonly [string, string]>): number {
    const n = entries.length;
    if (this.count === n) {
      let i = 0;
      while (i < n && entries[i][0] === this.names[i] && entries[i][1] === this.values[i]) i++;
      if (i === n) {
        out.set(this.bytes, at);
        return this.bytes.length;
      }
    }
    const known = this.count < n ? this.count : n;
    writeU32(out, at, n);
    let sizes = at + 4;
    let data = sizes + n * 8;
    // The run of entries equal to the kept ones being passed over, copied when it ends.
    let run = -1;
    let runAt = 0;
    for (let i = 0; i < n; i++) {
      const name = entries[i][0];
      const value = entries[i][1];
      let kl: number;
      let vl: number;
      if (i < known && name === this.names[i] && value === this.values[i]) {
        kl = this.nameLengths[i];
        vl = this.valueLengths[i];
        if (run < 0) {
          run = i;
          runAt = data;
        }
        data += kl + vl + 2;
      } else {
        if (run >= 0) {
          out.set(this.bytes.subarray(this.starts[run], this.starts[i]), runAt);
          run = -1;
        }
        kl = writeString(out, name, data);
        out[data + kl] = 0;
        data += kl + 1;
        vl = writeString(out, value, data);
        out[data + vl] = 0;
        data += vl + 1;
        this.names[i] = name;
        this.values[i] = value;
        this.nameLengths[i] = kl;
        this.valueLengths[i] = vl;
      }
      writeU32(out, sizes, kl);
      writeU32(out, sizes + 4, vl);
      sizes += 8;
    }
    if (run >= 0) out.set(this.bytes.subarray(this.starts[run], this.starts[n]), runAt);
    this.keep(out, at, data - at, n);
    return data - at;
  }

  /** Keeps the serialization just written (names, values and lengths are already in place). */
  private keep(out: Buffer, at: number, length: number, n: number): void {
    if (length > MAX_KEPT_BYTES) {
      this.forget();
      return;
    }
    this.bytes = new Uint8Array(out.subarray(at, at + length));
    let start = 4 + n * 8;
    for (let i = 0; i < n; i++) {
      this.starts[i] = start;
      start += this.nameLengths[i] + this.valueLengths[i] + 2;
    }
    this.starts[n] = start;
    this.count = n;
    this.names.length = this.values.length = this.nameLengths.length = this.valueLengths.length = n;
    this.starts.length = n + 1;
  }

  private forget(): void {
    this.count = -1;
    this.names = [];
    this.values = [];
    this.nameLengths = [];
    this.valueLengths = [];
    this.starts = [];
    this.bytes = NO_BYTES;
  }
}
