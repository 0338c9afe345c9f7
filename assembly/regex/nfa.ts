// Thompson construction (Thompson 1968; Cox, "Regular Expression Matching
// Can Be Simple And Fast", 2007): the AST becomes a program of instructions
// with epsilon edges. The program is built back to front, each node compiled
// with the pc it continues to, so no patch lists are needed.
//
// Counted repetition copies its operand (x{2,4} = x x (x (x)?)?), so the
// program size is estimated from the AST first and oversized patterns are
// refused before anything is emitted.
import { AssertKind, Node, NodeKind, UNBOUNDED } from "./ast";
import { anySet, CharSet } from "./char_set";

export enum Op {
  /** Consume one code unit in sets[arg], continue at out. */
  Char,
  /** Continue at both out and out1. */
  Split,
  /** Zero-width assertion `arg` (an AssertKind), continue at out. */
  Assert,
  /** Pattern number `arg` matches here. */
  Match,
}

/** Estimates stop growing here; anything this big is refused anyway. */
const SIZE_CAP: i64 = 1 << 40;

export class Program {
  op: Array<i32> = [];
  arg: Array<i32> = [];
  out: Array<i32> = [];
  out1: Array<i32> = [];
  /** Distinct character sets used by Char instructions. */
  sets: Array<CharSet> = [];
  start: i32 = 0;
  hasWordAsserts: bool = false;
  patternCount: i32 = 0;
  private setIndex: Map<string, i32> = new Map();

  get length(): i32 {
    return this.op.length;
  }

  emit(op: Op, arg: i32, out: i32, out1: i32): i32 {
    const pc = this.op.length;
    this.op.push(op);
    this.arg.push(arg);
    this.out.push(out);
    this.out1.push(out1);
    return pc;
  }

  internSet(set: CharSet): i32 {
    const key = set.key();
    if (this.setIndex.has(key)) return this.setIndex.get(key);
    const index = this.sets.length;
    this.sets.push(set);
    this.setIndex.set(key, index);
    return index;
  }
}

/** Number of instructions `node` compiles to (saturating at SIZE_CAP). */
export function estimateSize(node: Node): i64 {
  switch (node.kind) {
    case NodeKind.Empty:
      return 0;
    case NodeKind.Chars:
    case NodeKind.Assert:
      return 1;
    case NodeKind.Concat:
    case NodeKind.Alternate: {
      let total: i64 = node.kind == NodeKind.Alternate ? node.children.length - 1 : 0;
      for (let i = 0; i < node.children.length; i++) {
        total += estimateSize(unchecked(node.children[i]));
        if (total > SIZE_CAP) return SIZE_CAP;
      }
      return total;
    }
    case NodeKind.Repeat: {
      const x = estimateSize(node.children[0]);
      const min = <i64>node.min;
      const total = node.max == UNBOUNDED ? (min > 0 ? min * x + 1 : x + 1) : min * x + (<i64>node.max - min) * (x + 1);
      return total > SIZE_CAP ? SIZE_CAP : total;
    }
  }
  return 0;
}

/**
 * Compiles patterns into one program; pattern i ends in `Match i`.
 * With `unanchored`, the program starts with a loop over any code unit, so a
 * match may begin anywhere (what RegExp.prototype.test does).
 */
export function compileProgram(patterns: Array<Node>, unanchored: bool): Program {
  const prog = new Program();
  prog.patternCount = patterns.length;
  let start = -1;
  for (let i = patterns.length - 1; i >= 0; i--) {
    const match = prog.emit(Op.Match, i, -1, -1);
    const entry = compileNode(prog, patterns[i], match);
    start = start < 0 ? entry : prog.emit(Op.Split, 0, entry, start);
  }
  // No patterns: a character set with nothing in it matches nothing.
  if (start < 0) start = prog.emit(Op.Char, prog.internSet(new CharSet()), -1, -1);
  if (unanchored) {
    const loop = prog.emit(Op.Split, 0, start, -1);
    unchecked(prog.out1[loop] = prog.emit(Op.Char, prog.internSet(anySet()), loop, -1));
    start = loop;
  }
  prog.start = start;
  return prog;
}

function compileNode(prog: Program, node: Node, next: i32): i32 {
  switch (node.kind) {
    case NodeKind.Empty:
      return next;
    case NodeKind.Chars:
      return prog.emit(Op.Char, prog.internSet(node.chars!), next, -1);
    case NodeKind.Assert:
      if (node.assertKind == AssertKind.WordBoundary || node.assertKind == AssertKind.NotWordBoundary) {
        prog.hasWordAsserts = true;
      }
      return prog.emit(Op.Assert, node.assertKind, next, -1);
    case NodeKind.Concat: {
      let pc = next;
      for (let i = node.children.length - 1; i >= 0; i--) pc = compileNode(prog, unchecked(node.children[i]), pc);
      return pc;
    }
    case NodeKind.Alternate: {
      const last = node.children.length - 1;
      let pc = compileNode(prog, node.children[last], next);
      for (let i = last - 1; i >= 0; i--) {
        pc = prog.emit(Op.Split, 0, compileNode(prog, unchecked(node.children[i]), next), pc);
      }
      return pc;
    }
    case NodeKind.Repeat:
      return compileRepeat(prog, node, next);
  }
  return next;
}

function compileRepeat(prog: Program, node: Node, next: i32): i32 {
  const x = node.children[0];
  let tail = next;
  let copies = node.min;
  if (node.max == UNBOUNDED) {
    // x* is `L: split(body, next)` with the body looping back to L; for
    // x{n,} (n >= 1) the last mandatory copy doubles as the loop body.
    const loop = prog.emit(Op.Split, 0, -1, next);
    const body = compileNode(prog, x, loop);
    unchecked(prog.out[loop] = body);
    if (copies == 0) return loop;
    tail = body;
    copies--;
  } else {
    // The optional copies nest: x{0,2} = (x(x)?)?.
    for (let i = node.min; i < node.max; i++) {
      tail = prog.emit(Op.Split, 0, compileNode(prog, x, tail), next);
    }
  }
  for (let i = 0; i < copies; i++) tail = compileNode(prog, x, tail);
  return tail;
}
