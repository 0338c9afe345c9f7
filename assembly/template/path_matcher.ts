// The HTTPAPISpec template matcher: a trie over template segments with
// depth-first backtracking, after istio/proxy src/istio/api_spec/
// path_matcher.h and path_matcher_node.cc (research note hub-client §3.3).
//
// Edges are literal segments, `*` and `**`; a verb is stored as one more
// literal edge. Each node maps methods to the pattern registered there. At
// each node a request segment tries, in order, and takes the first branch
// that leads to a full match:
//   1. the literal child equal to it (one hash probe, see literal_table.ts);
//   2. the `*` child;
//   3. the `**` child, which consumes at least this segment. Inside a `**`
//      node each further segment first tries the node's literal children and
//      is otherwise swallowed by the `**` itself.
// At the end of the path the node's patterns are consulted (exact method,
// then `*`), and if none fits, those of a `**` child directly below: a
// trailing `**` may match zero segments (`/a/**` matches `/a`), one in the
// middle needs at least one.
//
// Cost per lookup: one pass over the path to split it and hash its segments,
// then a walk whose length depends on the path and the templates' shapes,
// not on how many templates are registered.

import { bindVariables, TemplateMatch } from "./bindings";
import { hashCodeUnits, LiteralTable } from "./literal_table";
import { RequestSegments, VERB_OWNER } from "./request_path";
import { SegmentKind, UriTemplate } from "./uri_template";

/** The method that matches any request method (after exact ones). */
export const ANY_METHOD = "*";

const NO_PATTERN: i32 = -1;

class RegisteredPattern {
  constructor(
    public readonly method: string,
    public readonly patternIndex: i32,
    public readonly template: UriTemplate,
  ) {}
}

class TrieNode {
  star: TrieNode | null = null;
  doubleStar: TrieNode | null = null;
  // At most one per method; few methods exist, so a scan is cheapest.
  patterns: Array<RegisteredPattern> = [];

  constructor(
    /** Key of this node's literal children in the edge table. */
    public readonly id: i32,
    /** True for the target of a `**` edge. */
    public readonly isDoubleStar: bool,
  ) {}

  // The pattern for `method`: exact match first, then the `*` wildcard.
  patternFor(method: string): RegisteredPattern | null {
    const patterns = this.patterns;
    let wildcard: RegisteredPattern | null = null;
    for (let i = 0, n = patterns.length; i < n; i++) {
      const pattern = unchecked(patterns[i]);
      if (pattern.method == method) return pattern;
      if (pattern.method == ANY_METHOD) wildcard = pattern;
    }
    return wildcard;
  }
}

/**
 * Finds which registered template a request path matches.
 * Example:
 *   const matcher = new PathMatcher();
 *   matcher.insert("GET", parseUriTemplate("/shelves/{shelf}").template!, 7);
 *   matcher.lookup("GET", "/shelves/1?view=full"); // 7
 */
export class PathMatcher {
  private nodeCount: i32 = 1;
  private readonly root: TrieNode = new TrieNode(0, false);
  // Literal edges of all nodes, keyed by (parent id, segment text).
  private readonly edges: LiteralTable<TrieNode> = new LiteralTable<TrieNode>();
  // Verbs of registered templates: they decide whether a request's trailing
  // `:text` is a verb (request_path.ts).
  private readonly verbs: LiteralTable<bool> = new LiteralTable<bool>();
  // Scratch space for the request being matched, reused to avoid allocating.
  private readonly request: RequestSegments = new RequestSegments();

  /**
   * Registers `template` for `method` ("*" for any method) as pattern
   * `patternIndex`. Returns false, keeping the first registration, if the
   * same method and template shape (UriTemplate.shapeKey) is registered.
   */
  insert(method: string, template: UriTemplate, patternIndex: i32): bool {
    let node = this.root;
    const segments = template.segments;
    for (let i = 0, n = segments.length; i < n; i++) {
      const segment = unchecked(segments[i]);
      if (segment.kind == SegmentKind.Literal) {
        node = this.literalChild(node, segment.text);
      } else if (segment.kind == SegmentKind.Star) {
        let child = node.star;
        if (child === null) node.star = child = this.newNode(false);
        node = child;
      } else {
        let child = node.doubleStar;
        if (child === null) node.doubleStar = child = this.newNode(true);
        node = child;
      }
    }
    if (template.verb.length > 0) node = this.literalChild(node, template.verb);

    const patterns = node.patterns;
    for (let i = 0, n = patterns.length; i < n; i++) {
      if (unchecked(patterns[i]).method == method) return false;
    }
    patterns.push(new RegisteredPattern(method, patternIndex, template));
    // Upstream records the verb only once the registration succeeded.
    if (template.verb.length > 0) this.verbs.getOrInsert(VERB_OWNER, template.verb, true);
    return true;
  }

  /** The index of the pattern `path` matches for `method`, or -1. */
  lookup(method: string, path: string): i32 {
    const pattern = this.find(method, path);
    return pattern === null ? NO_PATTERN : pattern.patternIndex;
  }

  /**
   * Like lookup, and also binds the matched template's variables; null when
   * nothing matches.
   */
  bindings(method: string, path: string): TemplateMatch | null {
    const pattern = this.find(method, path);
    if (pattern === null) return null;
    // `find` left the split request in `this.request`.
    return bindVariables(pattern.template, pattern.patternIndex, this.request);
  }

  private find(method: string, path: string): RegisteredPattern | null {
    const request = this.request;
    request.split(path, this.verbs);
    return this.matchFrom(this.root, 0, method);
  }

  // Depth-first search from `node` with request segments [index, count) left.
  // Recursion depth is bounded by the trie's depth: `**` swallows segments in
  // a loop, so thousands of request segments do not deepen the stack.
  private matchFrom(node: TrieNode, index: i32, method: string): RegisteredPattern | null {
    if (node.isDoubleStar) return this.matchInsideDoubleStar(node, index, method);
    const request = this.request;
    if (index == request.count) {
      const pattern = node.patternFor(method);
      if (pattern !== null) return pattern;
      const doubleStar = node.doubleStar;
      return doubleStar === null ? null : doubleStar.patternFor(method);
    }
    const literal = this.literalChildFor(node, index);
    if (literal !== null) {
      const pattern = this.matchFrom(literal, index + 1, method);
      if (pattern !== null) return pattern;
    }
    const star = node.star;
    if (star !== null) {
      const pattern = this.matchFrom(star, index + 1, method);
      if (pattern !== null) return pattern;
    }
    const doubleStar = node.doubleStar;
    if (doubleStar !== null) return this.matchFrom(doubleStar, index + 1, method);
    return null;
  }

  // At a `**` node: the next segment either starts the literal tail that
  // follows the `**` or is swallowed. A `**` node has no wildcard children
  // (only literals may follow `**`).
  private matchInsideDoubleStar(node: TrieNode, index: i32, method: string): RegisteredPattern | null {
    const count = this.request.count;
    for (; index < count; index++) {
      const literal = this.literalChildFor(node, index);
      if (literal !== null) {
        const pattern = this.matchFrom(literal, index + 1, method);
        if (pattern !== null) return pattern;
      }
    }
    return node.patternFor(method);
  }

  // The literal child of `node` equal to request segment `index`, or null.
  private literalChildFor(node: TrieNode, index: i32): TrieNode | null {
    const request = this.request;
    const slot = this.edges.find(node.id, request.path, request.start(index), request.end(index), request.hash(index));
    return slot < 0 ? null : this.edges.valueAt(slot);
  }

  private literalChild(node: TrieNode, text: string): TrieNode {
    const slot = this.edges.find(node.id, text, 0, text.length, hashCodeUnits(text, 0, text.length));
    if (slot >= 0) return this.edges.valueAt(slot);
    return this.edges.getOrInsert(node.id, text, this.newNode(false));
  }

  private newNode(isDoubleStar: bool): TrieNode {
    return new TrieNode(this.nodeCount++, isDoubleStar);
  }
}
