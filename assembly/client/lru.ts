// A least-recently-used index from a 64-bit key to an intrusive node: the node
// class carries `lruKey`, `lruOlder` and `lruNewer`, so touching and evicting
// allocate nothing. The caches allocate a node only when they insert.
//
// Keys are hashes: two entries can share one. The caches confirm a found node
// against the request and replace a different node that holds the key.

export class Lru<T> {
  private readonly map: Map<u64, T> = new Map();
  private newest: T | null = null;
  private oldest: T | null = null;
  // The node last found or filed, under its key: requests that share a cache
  // entry (what a cache is for) find it again without hashing the key twice
  // (`has`, then `get`) and a call. Always what `map` holds for that key.
  private lastKey: u64 = 0;
  private lastNode: T | null = null;

  constructor(public readonly capacity: i32) {}

  get size(): i32 {
    return this.map.size;
  }

  // @ts-ignore: decorator
  @inline find(key: u64): T | null {
    const last = this.lastNode;
    return last !== null && this.lastKey == key ? last : this.lookUp(key);
  }

  private lookUp(key: u64): T | null {
    const map = this.map;
    if (!map.has(key)) return null;
    const node = map.get(key);
    this.lastKey = key;
    this.lastNode = node;
    return node;
  }

  /** The least recently used node, or null when empty. */
  get leastRecent(): T | null {
    return this.oldest;
  }

  /** Marks `node` as the most recently used. */
  touch(node: T): void {
    if (this.newest === node) return;
    this.unlink(node);
    this.linkNewest(node);
  }

  /**
   * Files `node` under `node.lruKey` as the most recently used, first removing
   * any node already filed under that key. Returns the node evicted to stay
   * within capacity (or replaced), which the caller releases; else null.
   */
  add(node: T): T | null {
    let dropped: T | null = null;
    const existing = this.find(node.lruKey);
    if (existing !== null) {
      this.remove(existing);
      dropped = existing;
    } else if (this.map.size >= this.capacity) {
      const oldest = this.oldest;
      if (oldest !== null) {
        this.remove(oldest);
        dropped = oldest;
      }
    }
    this.map.set(node.lruKey, node);
    this.lastKey = node.lruKey;
    this.lastNode = node;
    this.linkNewest(node);
    return dropped;
  }

  remove(node: T): void {
    this.map.delete(node.lruKey);
    if (this.lastNode === node) this.lastNode = null;
    this.unlink(node);
  }

  clear(): void {
    this.map.clear();
    this.newest = null;
    this.oldest = null;
    this.lastNode = null;
  }

  private linkNewest(node: T): void {
    node.lruOlder = this.newest;
    node.lruNewer = null;
    const newest = this.newest;
    if (newest !== null) newest.lruNewer = node;
    else this.oldest = node;
    this.newest = node;
  }

  private unlink(node: T): void {
    const older = node.lruOlder;
    const newer = node.lruNewer;
    if (older !== null) older.lruNewer = newer;
    else if (this.oldest === node) this.oldest = newer;
    if (newer !== null) newer.lruOlder = older;
    else if (this.newest === node) this.newest = older;
    node.lruOlder = null;
    node.lruNewer = null;
  }
}

/** Mixes a shape id into a signature so equal signatures of two shapes differ. */
export function lruKey(signature: u64, shapeId: u32): u64 {
  return signature ^ (<u64>shapeId * 0x9e3779b97f4a7c15);
}
