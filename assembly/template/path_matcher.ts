// The HTTPAPISpec template matcher (research note hub-client §3.3-3.5), after
// istio/proxy src/istio/api_spec/path_matcher.h: templates are inserted into
// a trie whose edges are literal segments, `*` and `**`, with a verb as one
// more literal edge; each node maps methods to the pattern registered there.
// trie_search.ts walks it.
//
// Cost per lookup: one pass over the path to split it and hash its segments
// (request_path.ts), then a walk whose length depends on the path and the
// templates' shapes, not on how many templates are registered: literal
// children are found by one hash probe, not by scanning siblings.

import { bindVariables, TemplateMatch } from "./bindings";
import { knownAt, knownSlotOfString } from "../known_strings";
import { LiteralTable } from "./literal_table";
import { RequestSegments, VERB_OWNER } from "./request_path";
import { RegisteredPattern, TrieNode } from "./trie_node";
import { TrieSearch } from "./trie_search";
import { SegmentKind, UriTemplate } from "./uri_template";

const NO_PATTERN: i32 = -1;

/**
 * Finds which registered template a request path matches.
 * Example:
 *   const matcher = new PathMatcher();
 *   matcher.insert("GET", parseUriTemplate("/shelves/{shelf}").template!, 7);
 *   matcher.lookup("GET", "/shelves/1?view=full"); // 7
 */
export class PathMatcher {
  private readonly root: TrieNode = new TrieNode(0, false);
  // All nodes by id (the root is 0): the search stacks ids, not references.
  private readonly nodes: Array<TrieNode> = [this.root];
  // Literal edges of all nodes, keyed by (parent id, segment text).
  private readonly edges: LiteralTable<TrieNode> = new LiteralTable<TrieNode>();
  // Verbs of registered templates: they decide whether a request's trailing
  // `:text` is a verb (request_path.ts).
  private readonly verbs: LiteralTable<bool> = new LiteralTable<bool>();
  // Scratch space for the request being matched, reused to avoid allocating.
  private readonly request: RequestSegments = new RequestSegments();
  private readonly search: TrieSearch = new TrieSearch();

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
        node = this.starChild(node);
      } else {
        node = this.doubleStarChild(node);
      }
    }
    if (template.verb.length > 0) node = this.literalChild(node, template.verb);

    if (node.hasMethod(method)) return false;
    // A known method is kept as the shared string a request's method is (known_strings.ts).
    const known = knownSlotOfString(method);
    node.patterns.push(new RegisteredPattern(known >= 0 ? knownAt(known) : method, patternIndex, template));
    // Upstream records the verb only once the registration succeeded.
    if (template.verb.length > 0) this.verbs.getOrInsert(VERB_OWNER, template.verb, true);
    return true;
  }

  /** The index of the pattern `path` matches for `method`, or -1. */
  lookup(method: string, path: string): i32 {
    const bytes = String.UTF8.encode(path);
    return this.lookupBytes(method, changetype<usize>(bytes), <usize>bytes.byteLength);
  }

  /** lookup for a path given as its `len` UTF-8 bytes at `ptr` (a request's own, read in place). */
  lookupBytes(method: string, ptr: usize, len: usize): i32 {
    const pattern = this.find(method, ptr, len);
    return pattern === null ? NO_PATTERN : pattern.patternIndex;
  }

  /**
   * Like lookup, and also binds the matched template's variables; null when
   * nothing matches.
   */
  bindings(method: string, path: string): TemplateMatch | null {
    const bytes = String.UTF8.encode(path);
    return this.bindingsBytes(method, changetype<usize>(bytes), <usize>bytes.byteLength);
  }

  /** bindings for a path given as UTF-8 bytes, as lookupBytes. */
  bindingsBytes(method: string, ptr: usize, len: usize): TemplateMatch | null {
    const pattern = this.find(method, ptr, len);
    if (pattern === null) return null;
    // `find` left the split request in `this.request`.
    return bindVariables(pattern.template, pattern.patternIndex, this.request);
  }

  // @ts-ignore: decorator
  @inline private find(method: string, ptr: usize, len: usize): RegisteredPattern | null {
    this.request.split(ptr, len, this.verbs);
    return this.search.run(this.nodes, this.edges, this.request, method);
  }

  private literalChild(node: TrieNode, text: string): TrieNode {
    const slot = this.edges.findText(node.id, text);
    if (slot >= 0) return this.edges.valueAt(slot);
    return this.edges.getOrInsert(node.id, text, this.newNode(false));
  }

  private starChild(node: TrieNode): TrieNode {
    let child = node.star;
    if (child === null) {
      child = this.newNode(false);
      node.star = child;
    }
    return child;
  }

  private doubleStarChild(node: TrieNode): TrieNode {
    let child = node.doubleStar;
    if (child === null) {
      child = this.newNode(true);
      node.doubleStar = child;
    }
    return child;
  }

  private newNode(isDoubleStar: bool): TrieNode {
    const node = new TrieNode(this.nodes.length, isDoubleStar);
    this.nodes.push(node);
    return node;
  }
}
