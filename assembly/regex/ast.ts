// The parsed form of a pattern. Groups leave no node of their own: the engine
// only answers "does it match", so captures carry no meaning here, and the
// greedy/lazy choice (kept for completeness) does not change the answer.
import { CharSet } from "./char_set";

export enum NodeKind {
  /** Matches the empty string. */
  Empty,
  /** One code unit from `chars` (a literal is a set of one). */
  Chars,
  Concat,
  Alternate,
  /** `child{min,max}`; max is UNBOUNDED for `*`, `+`, `{n,}`. */
  Repeat,
  /** A zero-width assertion; see AssertKind. */
  Assert,
}

export enum AssertKind {
  /** `^` (non-multiline: only at the start of the input). */
  BeginText,
  /** `$` (non-multiline: only at the end of the input). */
  EndText,
  /** `\b` */
  WordBoundary,
  /** `\B` */
  NotWordBoundary,
}

export const UNBOUNDED: i32 = -1;

export class Node {
  kind: NodeKind;
  children: Array<Node> = [];
  chars: CharSet | null = null;
  min: i32 = 0;
  max: i32 = 0;
  greedy: bool = true;
  assertKind: AssertKind = AssertKind.BeginText;

  constructor(kind: NodeKind) {
    this.kind = kind;
  }

  static empty(): Node {
    return new Node(NodeKind.Empty);
  }

  static chars(set: CharSet): Node {
    const node = new Node(NodeKind.Chars);
    node.chars = set.normalize();
    return node;
  }

  static literal(cu: i32): Node {
    return Node.chars(CharSet.single(cu));
  }

  static concat(children: Array<Node>): Node {
    const node = new Node(NodeKind.Concat);
    node.children = children;
    return node;
  }

  static alternate(children: Array<Node>): Node {
    const node = new Node(NodeKind.Alternate);
    node.children = children;
    return node;
  }

  static repeat(child: Node, min: i32, max: i32, greedy: bool): Node {
    const node = new Node(NodeKind.Repeat);
    node.children = [child];
    node.min = min;
    node.max = max;
    node.greedy = greedy;
    return node;
  }

  static assertion(kind: AssertKind): Node {
    const node = new Node(NodeKind.Assert);
    node.assertKind = kind;
    return node;
  }
}
