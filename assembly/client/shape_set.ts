// The distinct referenced-attributes shapes a cache has filed entries under
// (upstream keeps them in `referenced_map_`, a hash map that only grows).
// Here each shape counts the live entries filed under it and leaves the set
// with the last one, so the list a lookup walks stays bounded by the entries.
import { ReferencedShape } from "./referenced";

export class ShapeSlot {
  /** Position in ShapeSet.slots (moves when another slot is removed). */
  index: i32 = -1;
  /** Cache entries filed under this shape. */
  live: i32 = 0;

  constructor(
    public readonly shape: ReferencedShape,
    /** Never reused within a set: mixed into the cache key with the signature. */
    public readonly id: u32,
  ) {}
}

export class ShapeSet {
  /** Live slots, in no particular order (a lookup tries them all). */
  readonly slots: Array<ShapeSlot> = [];
  private readonly byKey: Map<string, ShapeSlot> = new Map();
  private nextId: u32 = 1;

  get size(): i32 {
    return this.slots.length;
  }

  /** The slot of an equal shape, or null. */
  find(shape: ReferencedShape): ShapeSlot | null {
    const key = shape.key();
    return this.byKey.has(key) ? this.byKey.get(key) : null;
  }

  /** The slot of an equal shape, added if new (with no live entries yet). */
  intern(shape: ReferencedShape): ShapeSlot {
    const key = shape.key();
    if (this.byKey.has(key)) return this.byKey.get(key);
    const slot = new ShapeSlot(shape, this.nextId++);
    slot.index = this.slots.length;
    this.slots.push(slot);
    this.byKey.set(key, slot);
    return slot;
  }

  retain(slot: ShapeSlot): void {
    slot.live++;
  }

  /** One entry less under `slot`; the slot leaves the set with its last entry. */
  release(slot: ShapeSlot): void {
    if (--slot.live > 0 || slot.index < 0) return;
    const slots = this.slots;
    const last = slots.pop();
    if (last !== slot) {
      slots[slot.index] = last;
      last.index = slot.index;
    }
    slot.index = -1;
    this.byKey.delete(slot.shape.key());
  }

  clear(): void {
    for (let i = 0; i < this.slots.length; i++) this.slots[i].index = -1;
    this.slots.length = 0;
    this.byKey.clear();
  }
}
