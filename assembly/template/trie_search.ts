// Depth-first search of the path matcher's trie for one request, with
// backtracking (istio/proxy path_matcher_node.cc LookupPath; research note
// hub-client §3.3). At each node a request segment tries, in order, and takes
// the first branch that leads to a full match:
//   1. the literal child equal to it (one hash probe, see literal_table.ts);
//   2. the `*` child;
//   3. the `**` child, which consumes at least this segment. Inside a `**`
//      node each further segment first tries the node's literal children (the
//      literal tail of the template) and is otherwise swallowed.
// At the end of the path a node's patterns are consulted (exact method, then
// `*`), and if none fits, those of a `**` child directly below: a trailing
// `**` may match zero segments (`/a/**` matches `/a`), one in the middle
// needs at least one.
//
// The search keeps its own stack instead of recursing: the depth follows the
// templates' lengths, which configuration controls, and AssemblyScript's
// shadow stack is small (32 KiB) and traps when exhausted.

import { LiteralTable } from "./literal_table";
import { RequestSegments } from "./request_path";
import { RegisteredPattern, TrieNode } from "./trie_node";

// Progress of a plain node's frame: the next branch to try.
const TRY_LITERAL: i32 = 0;
const TRY_STAR: i32 = 1;
const TRY_DOUBLE_STAR: i32 = 2;
const EXHAUSTED: i32 = 3;

/** Reusable search state; one per matcher (it is scratch space). */
export class TrieSearch {
  // Frame i: a node, the request segment at which it was entered, and its
  // progress (a TRY_* value, or for a `**` node the next segment to try as
  // the start of the literal tail).
  private nodes: Array<TrieNode> = [];
  private positions: Array<i32> = [];
  private progress: Array<i32> = [];
  private depth: i32 = 0;

  /** The pattern `request` matches for `method` from `root`, or null. */
  run(root: TrieNode, edges: LiteralTable<TrieNode>, request: RequestSegments, method: string): RegisteredPattern | null {
    const count = request.count;
    this.depth = 0;
    this.push(root, 0);
    while (this.depth > 0) {
      const top = this.depth - 1;
      const node = unchecked(this.nodes[top]);
      const position = unchecked(this.positions[top]);

      if (node.isDoubleStar) {
        let cursor = unchecked(this.progress[top]);
        let tail: TrieNode | null = null;
        while (tail === null && cursor < count) {
          tail = literalChild(edges, node, request, cursor);
          cursor++;
        }
        if (tail !== null) {
          unchecked((this.progress[top] = cursor));
          this.push(tail, cursor);
          continue;
        }
        // Every remaining segment is swallowed by the `**`.
        const pattern = node.patternFor(method);
        if (pattern !== null) return pattern;
        this.depth--;
        continue;
      }

      if (position == count) {
        let pattern = node.patternFor(method);
        if (pattern === null) {
          const doubleStar = node.doubleStar;
          if (doubleStar !== null) pattern = doubleStar.patternFor(method);
        }
        if (pattern !== null) return pattern;
        this.depth--;
        continue;
      }

      const stage = unchecked(this.progress[top]);
      let next: TrieNode | null = null;
      if (stage == TRY_LITERAL) {
        unchecked((this.progress[top] = TRY_STAR));
        next = literalChild(edges, node, request, position);
      } else if (stage == TRY_STAR) {
        unchecked((this.progress[top] = TRY_DOUBLE_STAR));
        next = node.star;
      } else if (stage == TRY_DOUBLE_STAR) {
        unchecked((this.progress[top] = EXHAUSTED));
        next = node.doubleStar;
      } else {
        this.depth--;
        continue;
      }
      if (next !== null) this.push(next, position + 1);
    }
    return null;
  }

  // A `**` node starts trying its literal tail at the segment after the one
  // it consumed; other nodes start with their literal child.
  private push(node: TrieNode, position: i32): void {
    const progress = node.isDoubleStar ? position : TRY_LITERAL;
    const depth = this.depth;
    if (depth < this.nodes.length) {
      unchecked((this.nodes[depth] = node));
      unchecked((this.positions[depth] = position));
      unchecked((this.progress[depth] = progress));
    } else {
      this.nodes.push(node);
      this.positions.push(position);
      this.progress.push(progress);
    }
    this.depth = depth + 1;
  }
}

// The literal child of `node` equal to request segment `index`, or null.
function literalChild(edges: LiteralTable<TrieNode>, node: TrieNode, request: RequestSegments, index: i32): TrieNode | null {
  const slot = edges.find(node.id, request.path, request.start(index), request.end(index), request.hash(index));
  return slot < 0 ? null : edges.valueAt(slot);
}
