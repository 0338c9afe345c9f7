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

  /**
   * The pattern `request` matches for `method`, searching from node 0;
   * `nodes[id]` is the node with that id.
   *
   * The frame being worked on is kept in locals; a frame is saved on the
   * stack only when it has something left to try once its child's branch
   * fails (a `*` or `**` child not tried yet, a `**` node's further tail
   * starts), so a walk down literal edges alone saves none.
   */
  // @ts-ignore: decorator
  @inline run(nodes: Array<TrieNode>, edges: LiteralTable<TrieNode>, request: RequestSegments, method: string): RegisteredPattern | null {
    const count = request.count;
    let depth = 0;
    let node = unchecked(nodes[0]);
    let position = 0;
    let progress = TRY_LITERAL;
    while (true) {
      if (node.isDoubleStar) {
        let cursor = progress;
        let tail: TrieNode | null = null;
        while (tail === null && cursor < count) {
          tail = literalChild(edges, node, request, cursor);
          cursor++;
        }
        if (tail !== null) {
          depth = this.save(depth, node.id, position, cursor);
          node = tail;
          position = cursor;
          progress = TRY_LITERAL;
          continue;
        }
        // Every remaining segment is swallowed by the `**`.
        const pattern = node.patternFor(method);
        if (pattern !== null) return pattern;
      } else if (position == count) {
        let pattern = node.patternFor(method);
        if (pattern === null) {
          const doubleStar = node.doubleStar;
          if (doubleStar !== null) pattern = doubleStar.patternFor(method);
        }
        if (pattern !== null) return pattern;
      } else {
        let next: TrieNode | null = null;
        if (progress == TRY_LITERAL) {
          next = literalChild(edges, node, request, position);
          progress = TRY_STAR;
        }
        if (next === null && progress == TRY_STAR) {
          next = node.star;
          progress = TRY_DOUBLE_STAR;
        }
        if (next === null && progress == TRY_DOUBLE_STAR) {
          next = node.doubleStar;
          progress = EXHAUSTED;
        }
        if (next !== null) {
          const more = (progress == TRY_STAR && node.star !== null) || (progress != EXHAUSTED && node.doubleStar !== null);
          if (more) depth = this.save(depth, node.id, position, progress);
          position++;
          // A `**` node starts trying its literal tail at the segment after the one it consumed.
          progress = next.isDoubleStar ? position : TRY_LITERAL;
          node = next;
          continue;
        }
      }
      // This frame's branches all failed: back to the last saved one.
      if (depth == 0) return null;
      depth--;
      const at = depth * FRAME;
      const frames = this.frames;
      node = unchecked(nodes[unchecked(frames[at])]);
      position = unchecked(frames[at + 1]);
      progress = unchecked(frames[at + 2]);
    }
    return null;
  }

  // Saves a frame at `depth`; returns the new depth.
  // @ts-ignore: decorator
  @inline private save(depth: i32, id: i32, position: i32, progress: i32): i32 {
    const at = depth * FRAME;
    if (at == this.frames.length) this.grow();
    const frames = this.frames;
    unchecked((frames[at] = id));
    unchecked((frames[at + 1] = position));
    unchecked((frames[at + 2] = progress));
    return depth + 1;
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
