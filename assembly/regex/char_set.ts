// A set of UTF-16 code units, kept as sorted, disjoint, non-adjacent
// inclusive ranges. The engine works in non-unicode mode (like a JavaScript
// RegExp without the `u` flag), so the universe is 0x0000..0xFFFF and a
// surrogate pair is two separate code units.

export const MAX_CODE_UNIT: i32 = 0xffff;

export class CharSet {
  // [lo0, hi0, lo1, hi1, ...]; canonical once `normalize` has run.
  ranges: Array<i32> = [];

  static single(cu: i32): CharSet {
    const set = new CharSet();
    set.ranges.push(cu);
    set.ranges.push(cu);
    return set;
  }

  static range(lo: i32, hi: i32): CharSet {
    const set = new CharSet();
    set.ranges.push(lo);
    set.ranges.push(hi);
    return set;
  }

  /** Adds lo..hi (inclusive); call `normalize` before reading the set. */
  addRange(lo: i32, hi: i32): void {
    this.ranges.push(lo);
    this.ranges.push(hi);
  }

  addSet(other: CharSet): void {
    const r = other.ranges;
    for (let i = 0; i < r.length; i += 2) this.addRange(unchecked(r[i]), unchecked(r[i + 1]));
  }

  /** Sorts and merges ranges so that lookups can binary-search them. */
  normalize(): CharSet {
    const n = this.ranges.length >> 1;
    if (n <= 1) return this;
    // Pack (lo, hi) into one i64 so a plain numeric sort orders by lo.
    const packed = new Array<i64>(n);
    for (let i = 0; i < n; i++) {
      unchecked(packed[i] = (<i64>unchecked(this.ranges[2 * i]) << 32) | <i64>unchecked(this.ranges[2 * i + 1]));
    }
    packed.sort();
    const merged = new Array<i32>();
    let lo = <i32>(unchecked(packed[0]) >> 32);
    let hi = <i32>(unchecked(packed[0]) & 0xffffffff);
    for (let i = 1; i < n; i++) {
      const nlo = <i32>(unchecked(packed[i]) >> 32);
      const nhi = <i32>(unchecked(packed[i]) & 0xffffffff);
      if (nlo <= hi + 1) {
        if (nhi > hi) hi = nhi;
      } else {
        merged.push(lo);
        merged.push(hi);
        lo = nlo;
        hi = nhi;
      }
    }
    merged.push(lo);
    merged.push(hi);
    this.ranges = merged;
    return this;
  }

  /** The complement within 0x0000..0xFFFF; `this` must be normalized. */
  negated(): CharSet {
    const out = new CharSet();
    let next = 0;
    const r = this.ranges;
    for (let i = 0; i < r.length; i += 2) {
      const lo = unchecked(r[i]);
      if (lo > next) out.addRange(next, lo - 1);
      next = unchecked(r[i + 1]) + 1;
    }
    if (next <= MAX_CODE_UNIT) out.addRange(next, MAX_CODE_UNIT);
    return out;
  }

  /** Binary search over the normalized ranges. */
  contains(cu: i32): bool {
    const r = this.ranges;
    let lo = 0;
    let hi = (r.length >> 1) - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (cu < unchecked(r[2 * mid])) hi = mid - 1;
      else if (cu > unchecked(r[2 * mid + 1])) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /** A string identifying the set's contents, used to share equal sets. */
  key(): string {
    let s = "";
    const r = this.ranges;
    for (let i = 0; i < r.length; i++) s += String.fromCharCode(unchecked(r[i]));
    return s;
  }
}

// The class escapes as ECMA-262 (non-unicode mode) defines them.

/** `\d`: 0-9. */
export function digitSet(): CharSet {
  return CharSet.range(0x30, 0x39);
}

/** `\w`: A-Z a-z 0-9 _ (ECMA-262 WordCharacters without the `u`/`i` flags). */
export function wordSet(): CharSet {
  const set = new CharSet();
  set.addRange(0x30, 0x39);
  set.addRange(0x41, 0x5a);
  set.addRange(0x5f, 0x5f);
  set.addRange(0x61, 0x7a);
  return set;
}

/** `\s`: ECMA-262 WhiteSpace and LineTerminator code points. */
export function spaceSet(): CharSet {
  const set = new CharSet();
  set.addRange(0x09, 0x0d); // \t \n \v \f \r
  set.addRange(0x20, 0x20);
  set.addRange(0xa0, 0xa0);
  set.addRange(0x1680, 0x1680);
  set.addRange(0x2000, 0x200a);
  set.addRange(0x2028, 0x2029);
  set.addRange(0x202f, 0x202f);
  set.addRange(0x205f, 0x205f);
  set.addRange(0x3000, 0x3000);
  set.addRange(0xfeff, 0xfeff);
  return set;
}

/** `.` without the `s` flag: everything except the four line terminators. */
export function dotSet(): CharSet {
  const set = new CharSet();
  set.addRange(0x00, 0x09);
  set.addRange(0x0b, 0x0c);
  set.addRange(0x0e, 0x2027);
  set.addRange(0x202a, MAX_CODE_UNIT);
  return set;
}

export function anySet(): CharSet {
  return CharSet.range(0, MAX_CODE_UNIT);
}
