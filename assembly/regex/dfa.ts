// Lazily built DFA over a Thompson program (subset construction on demand,
// as in RE2's dfa.cc and Cox's "Regular Expression Matching: the Virtual
// Machine Approach"). A DFA state is the set of NFA instructions the
// simulation could be at; it is created the first time the input leads
// there and its transitions are filled in as they are taken. Each input code
// unit costs one class lookup and one table load once the transition is
// cached, and at most one pass over the program when it is not, so matching
// is linear in the input for every pattern.
//
// When the cache outgrows its budget it is dropped and rebuilt from the
// current state (RE2 does the same), so memory stays bounded too.
//
// Assertions: `^` is decided when a state is built (only the start state is
// at the input start). `$`, `\b` and `\B` depend on the next code unit, so a
// state keeps them pending and a transition first follows those that hold
// for the class being consumed (or for the end of input). For `\b`/`\B` a
// state also records whether the previous code unit was a word character.
import { AssertKind } from "./ast";
import { buildClassMap, ClassMap } from "./char_class";
import { wordSet } from "./char_set";
import { Op, Program } from "./nfa";
import { SparseSet } from "./sparse_set";

/** Transition target meaning no NFA thread survives. */
export const DEAD: i32 = 0;
/** Transition not computed yet. */
const UNKNOWN: i32 = -1;
/** With stopOnMatch: some pattern has matched; the scan can stop. */
export const MATCHED: i32 = -2;
/** runAscii met a byte that is not ASCII before the answer was known. */
export const NOT_ASCII: i32 = i32.MIN_VALUE;

/**
 * Cache budget per automaton, in 4-byte cells (transition rows plus state
 * sets): 1 MiB. Past it the cache is flushed and rebuilt on demand.
 */
export const DFA_CACHE_CELLS: i32 = 1 << 18;
/** Bookkeeping cells charged per state besides its row and set. */
const STATE_OVERHEAD_CELLS: i32 = 8;

/** Largest set-by-class membership table precomputed (bytes). */
const MEMBER_TABLE_LIMIT: i64 = 1 << 20;

const EMPTY: StaticArray<i32> = new StaticArray<i32>(0);

// State flags (only kept when the state has pending assertions).
const AT_START: i32 = 1;
const PREV_WORD: i32 = 2;
const HAS_PENDING: i32 = 4;

// What is known about the next code unit when following assertions.
const LOOK_UNKNOWN: i32 = 0;
const LOOK_END: i32 = 1;
const LOOK_WORD: i32 = 2;
const LOOK_OTHER: i32 = 3;

export class LazyDfa {
  readonly classes: ClassMap;
  readonly numClasses: i32;
  /** Times the cache was flushed; for tests and diagnostics. */
  flushes: i32 = 0;

  // Cached states; index 0 is reserved for DEAD.
  private trans: StaticArray<i32>;
  private numStates: i32 = 1;
  private statePcs: Array<StaticArray<i32>> = [];
  private stateFlags: Array<i32> = [];
  /** Patterns that match if the input ends in this state, ascending. */
  private stateEnds: Array<StaticArray<i32>> = [];
  private slots: StaticArray<i32>;
  private cellsUsed: i32 = 0;
  private maxStates: i32;
  private startState: i32 = UNKNOWN;

  // The program's instructions as flat arrays (see nfa.ts Op).
  private op: StaticArray<i32>;
  private arg: StaticArray<i32>;
  private out: StaticArray<i32>;
  private out1: StaticArray<i32>;
  /** member[set * numClasses + cls] != 0 if the class is in the set; empty if too big. */
  private member: StaticArray<u8>;

  // Scratch space, sized to the program once.
  private expanded: SparseSet;
  private reached: SparseSet;
  private stack: StaticArray<i32>;
  private key: Array<i32> = [];
  private mark: StaticArray<u8>;
  private isWordClass: StaticArray<bool>;

  constructor(private prog: Program, private stopOnMatch: bool) {
    const sets = prog.sets.slice(0);
    if (prog.hasWordAsserts) sets.push(wordSet());
    const classes = buildClassMap(sets);
    const nc = classes.numClasses;
    const word = wordSet();
    const isWordClass = new StaticArray<bool>(nc);
    for (let c = 0; c < nc; c++) unchecked(isWordClass[c] = word.contains(unchecked(classes.representative[c])));
    const maxStates = max(DFA_CACHE_CELLS / (nc + STATE_OVERHEAD_CELLS), 4);
    let slotCount = 16;
    while (slotCount < maxStates * 2) slotCount <<= 1;
    const n = prog.length;
    const numSets = prog.sets.length;
    const member = new StaticArray<u8>(<i64>numSets * nc <= MEMBER_TABLE_LIMIT ? numSets * nc : 0);
    if (member.length > 0) {
      for (let set = 0; set < numSets; set++) {
        const chars = unchecked(prog.sets[set]);
        for (let c = 0; c < nc; c++) {
          unchecked(member[set * nc + c] = <u8>chars.contains(unchecked(classes.representative[c])));
        }
      }
    }

    this.op = StaticArray.fromArray(prog.op);
    this.arg = StaticArray.fromArray(prog.arg);
    this.out = StaticArray.fromArray(prog.out);
    this.out1 = StaticArray.fromArray(prog.out1);
    this.member = member;
    this.classes = classes;
    this.numClasses = nc;
    this.isWordClass = isWordClass;
    this.maxStates = maxStates;
    this.slots = new StaticArray<i32>(slotCount);
    this.trans = new StaticArray<i32>(nc * 16);
    this.expanded = new SparseSet(n);
    this.reached = new SparseSet(n);
    this.stack = new StaticArray<i32>(n);
    this.mark = new StaticArray<u8>(n);
    this.flush();
  }

  /**
   * Runs the automaton over `input`: returns the final state, DEAD once no
   * thread survives, or (with stopOnMatch) MATCHED as soon as a match ends.
   */
  run(input: string): i32 {
    let s = this.start();
    if (s <= 0) return s;
    const ptr = changetype<usize>(input);
    const n = input.length;
    const nc = this.numClasses;
    const classes = this.classes;
    const ascii = classes.ascii;
    let trans = this.trans;
    for (let i = 0; i < n; i++) {
      const cu = <i32>load<u16>(ptr + (<usize>i << 1));
      const cls = cu < 128 ? <i32>unchecked(ascii[cu]) : classes.highClassOf(cu);
      let next = unchecked(trans[s * nc + cls]);
      if (next <= 0) {
        if (next == UNKNOWN) {
          next = this.step(s, cls);
          trans = this.trans;
        }
        if (next <= 0) return next;
      }
      s = next;
    }
    return s;
  }

  /**
   * `run` over the `len` bytes at `ptr` read as ASCII text, which is the
   * same text as the string they decode to (a request's path matched in
   * place, with no string made of it); NOT_ASCII at the first byte past
   * 0x7f that the automaton reaches: decode those bytes and `run` them.
   */
  runAscii(ptr: usize, len: usize): i32 {
    let s = this.start();
    if (s <= 0) return s;
    const nc = this.numClasses;
    const ascii = this.classes.ascii;
    let trans = this.trans;
    for (let i: usize = 0; i < len; i++) {
      const byte = <i32>load<u8>(ptr + i);
      if (byte >= 128) return NOT_ASCII;
      const cls = <i32>unchecked(ascii[byte]);
      let next = unchecked(trans[s * nc + cls]);
      if (next <= 0) {
        if (next == UNKNOWN) {
          next = this.step(s, cls);
          trans = this.trans;
        }
        if (next <= 0) return next;
      }
      s = next;
    }
    return s;
  }

  /** Whether any pattern matches when the input ends in state `s` (> 0). */
  @inline endsInMatch(s: i32): bool {
    return unchecked(this.stateEnds[s]).length > 0;
  }

  /** Appends the patterns that match when the input ends in `s`, ascending. */
  appendEndMatches(s: i32, out: Array<i32>): void {
    const ends = unchecked(this.stateEnds[s]);
    for (let i = 0; i < ends.length; i++) out.push(unchecked(ends[i]));
  }

  // @ts-ignore: decorator
  @inline private start(): i32 {
    const known = this.startState;
    return known != UNKNOWN ? known : this.computeStart();
  }

  private computeStart(): i32 {
    const set = this.reached;
    set.clear();
    this.closure(set, this.prog.start, true, false, LOOK_UNKNOWN);
    const s = this.intern(set, AT_START);
    this.startState = s; // after intern, which may have flushed
    return s;
  }

  /** Computes (and caches) the transition of state `s` on class `cls`. */
  private step(s: i32, cls: i32): i32 {
    const prog = this.prog;
    const ops = this.op;
    const args = this.arg;
    const member = this.member;
    const nc = this.numClasses;
    const pcs = unchecked(this.statePcs[s]);
    const flags = unchecked(this.stateFlags[s]);
    const isWord = unchecked(this.isWordClass[cls]);

    // Follow the pending assertions that hold before this code unit.
    const exp = this.expanded;
    exp.clear();
    if (flags & HAS_PENDING) {
      const look = isWord ? LOOK_WORD : LOOK_OTHER;
      for (let i = 0; i < pcs.length; i++) {
        this.closure(exp, unchecked(pcs[i]), (flags & AT_START) != 0, (flags & PREV_WORD) != 0, look);
      }
    }
    const expanded = (flags & HAS_PENDING) != 0;
    const count = expanded ? exp.size : pcs.length;

    // Consume the code unit.
    const rep = unchecked(this.classes.representative[cls]);
    const next = this.reached;
    next.clear();
    for (let i = 0; i < count; i++) {
      const pc = expanded ? exp.at(i) : unchecked(pcs[i]);
      const op = unchecked(ops[pc]);
      if (op == Op.Char) {
        const set = unchecked(args[pc]);
        const inSet = member.length > 0 ? unchecked(member[set * nc + cls]) != 0 : unchecked(prog.sets[set]).contains(rep);
        if (inSet) this.closure(next, unchecked(this.out[pc]), false, false, LOOK_UNKNOWN);
      } else if (op == Op.Match && this.stopOnMatch) {
        // A match ended just before this code unit, once `$`/`\b` resolved.
        unchecked(this.trans[s * this.numClasses + cls] = MATCHED);
        return MATCHED;
      }
    }
    const flushesBefore = this.flushes;
    const target = this.intern(next, isWord ? PREV_WORD : 0);
    // After a flush, `s` no longer exists; the new state is still correct.
    if (this.flushes == flushesBefore) unchecked(this.trans[s * this.numClasses + cls] = target);
    return target;
  }

  /**
   * Adds `pc` and everything reachable from it without consuming input to
   * `set`. `look` is what is known of the next code unit; while it is
   * unknown, `$`, `\b` and `\B` stay in the set unresolved.
   */
  private closure(set: SparseSet, pc: i32, atStart: bool, prevWord: bool, look: i32): void {
    const ops = this.op;
    const args = this.arg;
    const outs = this.out;
    const outs1 = this.out1;
    const stack = this.stack;
    if (!set.add(pc)) return;
    let top = 0;
    unchecked(stack[top++] = pc);
    while (top > 0) {
      const cur = unchecked(stack[--top]);
      const op = unchecked(ops[cur]);
      let follow = -1;
      let follow1 = -1;
      if (op == Op.Split) {
        follow = unchecked(outs[cur]);
        follow1 = unchecked(outs1[cur]);
      } else if (op == Op.Assert) {
        const kind = unchecked(args[cur]);
        let holds = false;
        if (kind == AssertKind.BeginText) holds = atStart;
        else if (kind == AssertKind.EndText) holds = look == LOOK_END;
        else if (look != LOOK_UNKNOWN) {
          const boundary = prevWord != (look == LOOK_WORD);
          holds = kind == AssertKind.WordBoundary ? boundary : !boundary;
        }
        if (holds) follow = unchecked(outs[cur]);
      }
      if (follow >= 0 && set.add(follow)) unchecked(stack[top++] = follow);
      if (follow1 >= 0 && set.add(follow1)) unchecked(stack[top++] = follow1);
    }
  }

  /** Finds or creates the state for the instructions in `set`. */
  private intern(set: SparseSet, flagsIn: i32): i32 {
    const ops = this.op;
    // The state's identity: instructions that consume, match or wait on an
    // assertion (`^` is already decided), in canonical order.
    const key = this.key;
    key.length = 0;
    let pending = false;
    let matchesNow = false;
    for (let i = 0; i < set.size; i++) {
      const pc = set.at(i);
      const op = unchecked(ops[pc]);
      if (op == Op.Char) key.push(pc);
      else if (op == Op.Match) {
        key.push(pc);
        matchesNow = true;
      } else if (op == Op.Assert && unchecked(this.arg[pc]) != AssertKind.BeginText) {
        key.push(pc);
        pending = true;
      }
    }
    if (key.length == 0) return DEAD;
    if (matchesNow && this.stopOnMatch) return MATCHED;
    this.sortKey();
    // Flags only matter for resolving pending assertions; dropping them
    // otherwise keeps equivalent states from being duplicated.
    const flags = pending ? flagsIn | HAS_PENDING : 0;

    let h: u32 = 2166136261 ^ <u32>flags;
    for (let i = 0; i < key.length; i++) h = (h ^ <u32>unchecked(key[i])) * 16777619;
    const mask = this.slots.length - 1;
    let slot = <i32>(h & <u32>mask);
    for (;;) {
      const existing = unchecked(this.slots[slot]);
      if (existing < 0) break;
      if (unchecked(this.stateFlags[existing]) == flags && sameKey(unchecked(this.statePcs[existing]), key)) return existing;
      slot = (slot + 1) & mask;
    }

    const nc = this.numClasses;
    const cost = nc + key.length + STATE_OVERHEAD_CELLS;
    if (this.numStates >= this.maxStates || (this.numStates > 1 && this.cellsUsed + cost > DFA_CACHE_CELLS)) {
      this.flush();
      this.flushes++;
      return this.intern(set, flagsIn); // the slot search must be redone
    }

    const s = this.numStates++;
    this.cellsUsed += cost;
    unchecked(this.slots[slot] = s);
    this.statePcs.push(StaticArray.fromArray(key));
    this.stateFlags.push(flags);
    this.stateEnds.push(pending || matchesNow ? this.endMatches(key, flags) : EMPTY);
    const need = (s + 1) * nc;
    if (need > this.trans.length) {
      let capacity = this.trans.length << 1;
      while (capacity < need) capacity <<= 1;
      const grown = new StaticArray<i32>(capacity);
      memory.copy(changetype<usize>(grown), changetype<usize>(this.trans), <usize>(s * nc) << 2);
      this.trans = grown;
    }
    for (let c = s * nc; c < need; c++) unchecked(this.trans[c] = UNKNOWN);
    return s;
  }

  /** Patterns that match if the input ends in the state `key`/`flags`. */
  private endMatches(key: Array<i32>, flags: i32): StaticArray<i32> {
    const exp = this.expanded;
    exp.clear();
    for (let i = 0; i < key.length; i++) {
      this.closure(exp, unchecked(key[i]), (flags & AT_START) != 0, (flags & PREV_WORD) != 0, LOOK_END);
    }
    const found = new Array<i32>();
    for (let i = 0; i < exp.size; i++) {
      const pc = exp.at(i);
      if (unchecked(this.op[pc]) == Op.Match) found.push(unchecked(this.arg[pc]));
    }
    if (found.length == 0) return EMPTY;
    found.sort();
    return StaticArray.fromArray(found);
  }

  /**
   * Puts `key` in ascending order, so equal sets get equal keys. Small keys
   * are insertion-sorted; large ones are rebuilt by scanning a mark array
   * over their pc range, which is linear like the closure that built them.
   */
  private sortKey(): void {
    const key = this.key;
    const n = key.length;
    if (n <= 32) {
      for (let i = 1; i < n; i++) {
        const v = unchecked(key[i]);
        let j = i - 1;
        while (j >= 0 && unchecked(key[j]) > v) {
          unchecked(key[j + 1] = key[j]);
          j--;
        }
        unchecked(key[j + 1] = v);
      }
      return;
    }
    const mark = this.mark;
    let lo = i32.MAX_VALUE;
    let hi = -1;
    for (let i = 0; i < n; i++) {
      const pc = unchecked(key[i]);
      unchecked(mark[pc] = 1);
      if (pc < lo) lo = pc;
      if (pc > hi) hi = pc;
    }
    let k = 0;
    for (let pc = lo; pc <= hi; pc++) {
      if (unchecked(mark[pc])) {
        unchecked(mark[pc] = 0);
        unchecked(key[k++] = pc);
      }
    }
  }

  private flush(): void {
    this.numStates = 1;
    this.cellsUsed = 0;
    this.startState = UNKNOWN;
    this.slots.fill(-1);
    // Index 0 is DEAD; it is never looked up, only reserved.
    this.statePcs.length = 0;
    this.stateFlags.length = 0;
    this.stateEnds.length = 0;
    this.statePcs.push(new StaticArray<i32>(0));
    this.stateFlags.push(-1);
    this.stateEnds.push(new StaticArray<i32>(0));
  }
}

function sameKey(a: StaticArray<i32>, b: Array<i32>): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) if (unchecked(a[i]) != unchecked(b[i])) return false;
  return true;
}
