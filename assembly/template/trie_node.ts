// A node of the path matcher's trie (path_matcher.ts) and the patterns
// registered at it.

import { UriTemplate } from "./uri_template";

/** The method that matches any request method (after exact ones). */
export const ANY_METHOD = "*";

export class RegisteredPattern {
  constructor(
    public readonly method: string,
    public readonly patternIndex: i32,
    public readonly template: UriTemplate,
  ) {}
}

export class TrieNode {
  star: TrieNode | null = null;
  doubleStar: TrieNode | null = null;
  // At most one per method; few methods exist, so a scan is cheapest.
  patterns: Array<RegisteredPattern> = [];

  constructor(
    /** Key of this node's literal children in the matcher's edge table. */
    public readonly id: i32,
    /** True for the target of a `**` edge. */
    public readonly isDoubleStar: bool,
  ) {}

  /** The pattern for `method`: the exact method first, then `*`. */
  // @ts-ignore: decorator
  @inline patternFor(method: string): RegisteredPattern | null {
    const patterns = this.patterns;
    let wildcard: RegisteredPattern | null = null;
    for (let i = 0, n = patterns.length; i < n; i++) {
      const pattern = unchecked(patterns[i]);
      // A request's known method is the shared string a configuration's is: identity settles most.
      if (changetype<usize>(pattern.method) == changetype<usize>(method) || pattern.method == method) return pattern;
      if (pattern.method == ANY_METHOD) wildcard = pattern;
    }
    return wildcard;
  }

  /** True if a pattern is registered here for exactly `method`. */
  hasMethod(method: string): bool {
    const patterns = this.patterns;
    for (let i = 0, n = patterns.length; i < n; i++) {
      if (unchecked(patterns[i]).method == method) return true;
    }
    return false;
  }
}
