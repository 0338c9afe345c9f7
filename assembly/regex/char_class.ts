// Equivalence classes of code units: two code units are in the same class
// when every character set of the program treats them alike, so the DFA
// needs one transition per class instead of one per code unit (RE2's
// ByteMap, lifted from bytes to UTF-16 code units).
//
// Lookup: a table for code units below 128 (the common case for paths and
// header values) and a binary search over interval starts for the rest.
import { CharSet, MAX_CODE_UNIT } from "./char_set";

const ASCII_LIMIT: i32 = 128;

export class ClassMap {
  numClasses: i32 = 1;
  /** Class of each code unit below 128. */
  ascii: StaticArray<u16> = new StaticArray<u16>(ASCII_LIMIT);
  /** Sorted starts of the intervals at or above 128, and each one's class. */
  highStarts: StaticArray<i32> = new StaticArray<i32>(0);
  highClass: StaticArray<u16> = new StaticArray<u16>(0);
  /** One code unit of each class, for testing set membership. */
  representative: StaticArray<i32> = new StaticArray<i32>(0);

  @inline classOf(cu: i32): i32 {
    return cu < ASCII_LIMIT ? <i32>unchecked(this.ascii[cu]) : this.highClassOf(cu);
  }

  highClassOf(cu: i32): i32 {
    const starts = this.highStarts;
    // Last interval whose start is <= cu; starts[0] == 128 <= cu.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (unchecked(starts[mid]) <= cu) lo = mid;
      else hi = mid - 1;
    }
    return <i32>unchecked(this.highClass[lo]);
  }
}

/** Index of `value` in the sorted array `b` (which must contain it). */
function indexOf(b: Array<i32>, value: i32): i32 {
  let lo = 0;
  let hi = b.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (unchecked(b[mid]) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Partitions 0x0000..0xFFFF into the coarsest classes that every set in
 * `sets` respects (each set is a union of whole classes).
 */
export function buildClassMap(sets: Array<CharSet>): ClassMap {
  // 1. Elementary intervals [b[i], b[i+1]) from every range boundary.
  const raw = new Array<i32>();
  raw.push(0);
  raw.push(ASCII_LIMIT);
  raw.push(MAX_CODE_UNIT + 1);
  for (let s = 0; s < sets.length; s++) {
    const r = unchecked(sets[s]).ranges;
    for (let i = 0; i < r.length; i += 2) {
      raw.push(unchecked(r[i]));
      raw.push(unchecked(r[i + 1]) + 1);
    }
  }
  raw.sort();
  const b = new Array<i32>();
  for (let i = 0; i < raw.length; i++) {
    const v = unchecked(raw[i]);
    if (b.length == 0 || unchecked(b[b.length - 1]) != v) b.push(v);
  }
  const intervals = b.length - 1;

  // 2. Partition refinement: each set splits every class it partly covers.
  // The cost is the number of intervals each set covers.
  const classOf = new StaticArray<i32>(intervals);
  const size = new StaticArray<i32>(intervals);
  const count = new StaticArray<i32>(intervals);
  const remap = new StaticArray<i32>(intervals);
  const touched = new Array<i32>();
  unchecked(size[0] = intervals);
  let numClasses = 1;
  for (let s = 0; s < sets.length; s++) {
    const r = unchecked(sets[s]).ranges;
    touched.length = 0;
    for (let i = 0; i < r.length; i += 2) {
      const first = indexOf(b, unchecked(r[i]));
      const end = indexOf(b, unchecked(r[i + 1]) + 1);
      for (let k = first; k < end; k++) {
        const c = unchecked(classOf[k]);
        if (unchecked(count[c]) == 0) touched.push(c);
        unchecked(count[c]++);
      }
    }
    for (let t = 0; t < touched.length; t++) {
      const c = unchecked(touched[t]);
      const inside = unchecked(count[c]);
      if (inside < unchecked(size[c])) {
        unchecked(remap[c] = numClasses);
        unchecked(size[numClasses] = inside);
        unchecked(size[c] -= inside);
        numClasses++;
      } else {
        unchecked(remap[c] = c);
      }
      unchecked(count[c] = 0);
    }
    for (let i = 0; i < r.length; i += 2) {
      const first = indexOf(b, unchecked(r[i]));
      const end = indexOf(b, unchecked(r[i + 1]) + 1);
      for (let k = first; k < end; k++) unchecked(classOf[k] = remap[classOf[k]]);
    }
  }

  // 3. Lookup tables.
  const map = new ClassMap();
  map.numClasses = numClasses;
  const rep = new StaticArray<i32>(numClasses);
  for (let c = 0; c < numClasses; c++) unchecked(rep[c] = -1);
  const starts = new Array<i32>();
  const classes = new Array<u16>();
  for (let k = 0; k < intervals; k++) {
    const lo = unchecked(b[k]);
    const c = unchecked(classOf[k]);
    if (unchecked(rep[c]) < 0) unchecked(rep[c] = lo);
    if (lo < ASCII_LIMIT) {
      const hi = unchecked(b[k + 1]);
      for (let cu = lo; cu < hi; cu++) unchecked(map.ascii[cu] = <u16>c);
    } else if (classes.length == 0 || <i32>unchecked(classes[classes.length - 1]) != c) {
      // Neighbouring intervals of one class merge, shortening the search.
      starts.push(lo);
      classes.push(<u16>c);
    }
  }
  map.representative = rep;
  map.highStarts = StaticArray.fromArray(starts);
  map.highClass = StaticArray.fromArray(classes);
  return map;
}
