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

// A frame is three i32s: node id, the request segment at which the node was
// entered, and its progress (a TRY_* value, or for a `**` node the next
// segment to try as the start of the literal tail). Ids rather than node
// references keep the hot loop free of garbage-collector write barriers.
const FRAME: i32 = 3;
const INITIAL_FRAMES: i32 = 32;

/** Reusable search state; one per matcher (it is scratch space). */
export class TrieSearch {
  private frames: StaticArray<i32> = new StaticArray<i32>(INITIAL_FRAMES * FRAME);
  private depth: i32 = 0;

  /**
   * The pattern `request` matches for `method`, searching from node 0;
   * `nodes[id]` is the node with that id.
   */
  run(nodes: Array<TrieNode>, edges: LiteralTable<TrieNode>, request: RequestSegments, method: string): RegisteredPattern | null {
    const count = request.count;
    this.depth = 0;
    this.push(0, 0, TRY_LITERAL);
    while (this.depth > 0) {
      const at = (this.depth - 1) * FRAME;
      const frames = this.frames;
      const node = unchecked(nodes[unchecked(frames[at])]);
      const position = unchecked(frames[at + 1]);

      if (node.isDoubleStar) {
        let cursor = unchecked(frames[at + 2]);
        let tail: TrieNode | null = null;
        while (tail === null && cursor < count) {
          tail = literalChild(edges, node, request, cursor);
          cursor++;
        }
        if (tail !== null) {
          unchecked((frames[at + 2] = cursor));
          this.push(tail.id, cursor, TRY_LITERAL);
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

      const stage = unchecked(frames[at + 2]);
      let next: TrieNode | null = null;
      if (stage == TRY_LITERAL) {
        unchecked((frames[at + 2] = TRY_STAR));
        next = literalChild(edges, node, request, position);
      } else if (stage == TRY_STAR) {
        unchecked((frames[at + 2] = TRY_DOUBLE_STAR));
        next = node.star;
      } else if (stage == TRY_DOUBLE_STAR) {
        unchecked((frames[at + 2] = EXHAUSTED));
        next = node.doubleStar;
      } else {
        this.depth--;
        continue;
      }
      // A `**` node starts trying its literal tail at the segment after the
      // one it consumed.
      if (next !== null) this.push(next.id, position + 1, next.isDoubleStar ? position + 1 : TRY_LITERAL);
    }
    return null;
  }

  private push(id: i32, position: i32, progress: i32): void {
    const at = this.depth * FRAME;
    if (at == this.frames.length) this.grow();
    const frames = this.frames;
    unchecked((frames[at] = id));
    unchecked((frames[at + 1] = position));
    unchecked((frames[at + 2] = progress));
    this.depth++;
  }

  private grow(): void {
    const frames = new StaticArray<i32>(this.frames.length << 1);
    memory.copy(changetype<usize>(frames), changetype<usize>(this.frames), <usize>this.frames.length << 2);
    this.frames = frames;
  }
}

// The literal child of `node` equal to request segment `index`, or null.
// @ts-ignore: decorator
@inline
function literalChild(edges: LiteralTable<TrieNode>, node: TrieNode, request: RequestSegments, index: i32): TrieNode | null {
  const start = request.start(index);
  const slot = edges.find(node.id, request.ptr + <usize>start, <usize>(request.end(index) - start), request.hash(index));
  return slot < 0 ? null : edges.valueAt(slot);
}
