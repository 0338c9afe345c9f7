// A set of small integers with O(1) insert, test and clear that remembers
// insertion order (Briggs & Torczon 1993; the representation RE2 and Cox's
// NFA articles use for thread lists). The arrays are allocated once per
// automaton, so building DFA states does not allocate per NFA state.
export class SparseSet {
  dense: StaticArray<i32>;
  sparse: StaticArray<i32>;
  size: i32 = 0;

  constructor(capacity: i32) {
    this.dense = new StaticArray<i32>(capacity);
    this.sparse = new StaticArray<i32>(capacity);
  }

  @inline has(value: i32): bool {
    const i = unchecked(this.sparse[value]);
    return <u32>i < <u32>this.size && unchecked(this.dense[i]) == value;
  }

  /** Adds `value`; returns false if it was already present. */
  @inline add(value: i32): bool {
    if (this.has(value)) return false;
    unchecked(this.sparse[value] = this.size);
    unchecked(this.dense[this.size++] = value);
    return true;
  }

  @inline at(i: i32): i32 {
    return unchecked(this.dense[i]);
  }

  @inline clear(): void {
    this.size = 0;
  }
}
