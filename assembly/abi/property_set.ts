import { forEachPair } from "../pairs";
import { sameWords } from "../recent_strings";
import { Status } from "./enums";
import * as abi from "./imports";
import { dropHostBlock, hostBlockLength, hostBlockPtr, scratchLenSlot, scratchPtrSlot } from "./marshal";

// Several properties read at one point of a request, in as few host calls as
// the host allows. A host that answers batches (our Node host) takes the path
// `mesh` `properties` <dotted name>… and answers, in one call, a proxy-wasm
// pairs map of the names it has (absent ones left out), each value in the
// encoding a single read would give. Any other host (Envoy) does not know
// that path: NOT_FOUND on the first try, and from then on the VM reads the
// properties one call each, as before. Whether the host batches is a fact
// about the host, learnt once per VM.

const UNKNOWN: i32 = -1;
const SKIP_PATH_NAMES: i32 = 8;
let hostBatches: i32 = UNKNOWN;

/**
 * Receives one property of a set: `index` is its position in the set's
 * names, the value's bytes are the host's block, read in place (copy what
 * must outlive the call).
 */
export type PropertyVisit<T> = (target: T, index: i32, valuePtr: usize, valueLen: usize) => void;

/** A fixed list of properties (dotted names), encoded once at start. */
export class PropertySet<T> {
  /** Each property's own path (segments joined by NUL), for a host that does not batch (held here: `pathBytes` points into them). */
  private readonly paths: StaticArray<ArrayBuffer>;
  /** Where each path's bytes are and how many, in turn: the loop of a host that does not batch reads only these. */
  private readonly pathBytes: StaticArray<usize>;
  /** Each dotted name as UTF-8, to recognize the keys of a batch answer. */
  private readonly keys: StaticArray<ArrayBuffer>;
  /** `mesh` `properties` and every dotted name, NUL-separated. */
  private readonly batchPath: ArrayBuffer;
  private readonly names: StaticArray<string>;
  // Batch paths that leave out the names a read skips (so the host neither
  // looks them up nor writes them), by skip mask, each made when first asked
  // for: sets of up to SKIP_PATH_NAMES names; a larger set asks for all.
  private skipPaths: StaticArray<ArrayBuffer | null> | null = null;
  // The target of the read in progress (a read is never re-entered), and the properties it leaves out.
  private target: T | null = null;
  private skipped: u32 = 0;
  // Where the next key of a batch answer is looked for first: the host
  // answers in the order asked (absent names left out), so it is mostly the
  // one after the last found.
  private cursor: i32 = 0;

  constructor(
    names: StaticArray<string>,
    private readonly visit: PropertyVisit<T>,
  ) {
    assert(names.length <= 32, "PropertySet: at most 32 properties (read's skip mask)");
    const paths = new StaticArray<ArrayBuffer>(names.length);
    const keys = new StaticArray<ArrayBuffer>(names.length);
    let batch = "mesh\0properties";
    for (let i = 0; i < names.length; i++) {
      paths[i] = String.UTF8.encode(names[i].replaceAll(".", "\0"));
      keys[i] = String.UTF8.encode(names[i]);
      batch += "\0" + names[i];
    }
    const pathBytes = new StaticArray<usize>(names.length << 1);
    for (let i = 0; i < names.length; i++) {
      pathBytes[i << 1] = changetype<usize>(paths[i]);
      pathBytes[(i << 1) + 1] = <usize>paths[i].byteLength;
    }
    this.paths = paths;
    this.pathBytes = pathBytes;
    this.keys = keys;
    this.batchPath = String.UTF8.encode(batch);
    this.names = names;
  }

  /**
   * Reads every property of the set the host has into `target`, except those
   * whose bit is set in `skip` (bit i: the set's property i), which the
   * caller knows already: never asked for, one at a time or in a batch
   * (whose answer is filtered the same way, should a host give them anyway),
   * so every host gives the same values.
   */
  // @ts-ignore: decorator
  @inline read(target: T, skip: u32 = 0): void {
    if (skip != 0 && this.skipsAll(skip)) return;
    if (hostBatches != 0) {
      if (ask(skip == 0 ? this.batchPath : this.batchPathWithout(skip))) {
        hostBatches = 1;
        this.target = target;
        this.skipped = skip;
        this.cursor = 0;
        // A malformed answer is taken as far as it is well-formed; the rest stay at their defaults.
        forEachPair(hostBlockPtr(), hostBlockLength(), this, (set: PropertySet<T>, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): void => {
          const index = set.indexOf(keyPtr, keyLen);
          if (index >= 0) set.deliver(index, valuePtr, valueLen);
        });
        this.target = null;
        dropHostBlock();
        return;
      }
      if (hostBatches == UNKNOWN) hostBatches = 0;
    }
    const pathBytes = this.pathBytes;
    const at = changetype<usize>(pathBytes);
    const end = at + (<usize>pathBytes.length << alignof<usize>());
    for (let p = at; p < end; p += sizeof<usize>() << 1) {
      const i = <i32>((p - at) >> (alignof<usize>() + 1));
      if (((skip >>> <u32>i) & 1) != 0) continue;
      if (abi.proxy_get_property(load<usize>(p), load<usize>(p, sizeof<usize>()), scratchPtrSlot(), scratchLenSlot()) != Status.Ok) continue;
      this.visit(target, i, hostBlockPtr(), hostBlockLength());
      dropHostBlock();
    }
  }

  private skipsAll(skip: u32): bool {
    const n = this.names.length;
    const all: u32 = n == 32 ? 0xffffffff : (<u32>1 << <u32>n) - 1;
    return (skip & all) == all;
  }

  // The batch path of the names whose bit is clear in `skip`.
  private batchPathWithout(skip: u32): ArrayBuffer {
    const n = this.names.length;
    if (n > SKIP_PATH_NAMES) return this.batchPath;
    skip &= (1 << n) - 1;
    let paths = this.skipPaths;
    if (paths === null) {
      paths = new StaticArray<ArrayBuffer | null>(1 << n);
      this.skipPaths = paths;
    }
    let path = unchecked(paths[skip]);
    if (path === null) {
      let batch = "mesh\0properties";
      for (let i = 0; i < n; i++) if (((skip >>> <u32>i) & 1) == 0) batch += "\0" + unchecked(this.names[i]);
      path = String.UTF8.encode(batch);
      unchecked((paths[skip] = path));
    }
    return path;
  }

  /** The set's index of the name at `keyPtr`, or -1; tried from the one after the last found, then around. */
  indexOf(keyPtr: usize, keyLen: usize): i32 {
    const keys = this.keys;
    const n = keys.length;
    let i = this.cursor;
    for (let tried = 0; tried < n; tried++) {
      const key = unchecked(keys[i]);
      const next = i + 1 == n ? 0 : i + 1;
      if (<usize>key.byteLength == keyLen && sameWords(changetype<usize>(key), keyPtr, keyLen)) {
        this.cursor = next;
        return i;
      }
      i = next;
    }
    return -1;
  }

  deliver(index: i32, valuePtr: usize, valueLen: usize): void {
    if (((this.skipped >>> <u32>index) & 1) != 0) return;
    this.visit(this.target!, index, valuePtr, valueLen);
  }
}

function ask(path: ArrayBuffer): bool {
  return abi.proxy_get_property(changetype<usize>(path), <usize>path.byteLength, scratchPtrSlot(), scratchLenSlot()) == Status.Ok;
}

/** An integer property's value (8 bytes little-endian); -1 when shorter. */
export function int64At(ptr: usize, len: usize): i64 {
  return len >= 8 ? load<i64>(ptr) : -1;
}

/** A flag property's value (one byte, non-zero = true). */
export function boolAt(ptr: usize, len: usize): bool {
  return len > 0 && load<u8>(ptr) != 0;
}
