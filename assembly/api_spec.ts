import { AttributeBag } from "./attributes/bag";
import { AttributeValue } from "./attributes/value";
import { ApiKeyLocation } from "./api_key";
import { RegexSet } from "./regex/index";
import { PathMatcher, TemplateMatch } from "./template/index";

/** One HTTPAPISpecPattern after compilation. */
export class ApiPattern {
  constructor(
    public attributes: AttributeBag,
    /** Method to match; "*" matches any (also used when httpMethod is absent). */
    public method: string,
    /** The uriTemplate or regex as written, reported as the winner. */
    public text: string,
    public isRegex: bool,
  ) {}
}

/** The result of matching a request against a service's API specs. */
// Shared by every match without bindings; never mutated.
const NO_BINDINGS: Array<string> = [];

/** The result of matching a request against a service's API specs (read-only once returned). */
export class ApiMatch {
  matched: bool = false;
  /** Index into CompiledApiSpec.patterns of the winner, -1 if none. */
  winner: i32 = -1;
  bindingNames: Array<string> = NO_BINDINGS;
  bindingValues: Array<string> = NO_BINDINGS;
}

/** The answer for every request that matches no pattern: one shared, read-only object. */
export const NO_API_MATCH = new ApiMatch();

/**
 * All HTTPAPISpecs bound to one service, merged as upstream merged them
 * (patterns and key locations concatenated, spec-level attributes merged) and
 * compiled once: templates into one trie, regexes into one automaton, so a
 * request costs the same whatever the number of patterns.
 */
export class CompiledApiSpec {
  specAttributes: AttributeBag = new AttributeBag();
  patterns: Array<ApiPattern> = [];
  apiKeys: Array<ApiKeyLocation> = [];
  templates: PathMatcher = new PathMatcher();
  regexes: RegexSet | null = null;
  /** Pattern index of each member of `regexes`, in set order. */
  regexPatterns: Array<i32> = [];
  private regexHits: Array<i32> = [];

  get isEmpty(): bool {
    return this.patterns.length == 0;
  }

  /**
   * Matches method and path, and writes the API attributes into `bag`: the
   * spec-level attributes (only when some pattern matched — the spec's rule),
   * then the template winner's, then every matching regex pattern's in order.
   * Templates ignore the query string; regexes see the whole `:path`.
   * A match is written into `into` when given (storage the caller reuses),
   * else into a new ApiMatch.
   */
  apply(method: string, path: string, bag: AttributeBag, wantBindings: bool, into: ApiMatch | null = null): ApiMatch {
    return this.applyValue(method, AttributeValue.ofString(path), bag, wantBindings, into);
  }

  /**
   * apply for a `:path` given as a string value: a request's own, read in
   * place (templates match its UTF-8 bytes; only regexes need it decoded).
   */
  // @ts-ignore: decorator
  @inline applyValue(method: string, path: AttributeValue, bag: AttributeBag, wantBindings: bool, into: ApiMatch | null = null): ApiMatch {
    if (this.patterns.length == 0) return NO_API_MATCH;
    let templateWinner = -1;
    let bound: TemplateMatch | null = null;
    if (wantBindings) {
      bound = this.templates.bindingsBytes(method, path.textPtr(), path.textLen());
      if (bound !== null) templateWinner = bound.patternIndex;
    } else {
      templateWinner = this.templates.lookupBytes(method, path.textPtr(), path.textLen());
    }
    const hits = this.regexHits;
    if (hits.length != 0) hits.length = 0;
    if (this.regexes !== null) {
      const set = this.regexes as RegexSet;
      // The path's bytes in place when they are ASCII, as they nearly always are.
      if (!set.matchAllAscii(path.textPtr(), path.textLen(), hits)) set.matchAll(path.str, hits);
      // Drop regex hits whose method does not fit, keeping set order.
      let kept = 0;
      for (let i = 0; i < hits.length; i++) {
        const p = this.regexPatterns[hits[i]];
        const want = this.patterns[p].method;
        if (want == "*" || want == method) hits[kept++] = p;
      }
      if (hits.length != kept) hits.length = kept;
    }
    if (templateWinner < 0 && hits.length == 0) return NO_API_MATCH;
    const result = into !== null ? into : new ApiMatch();
    result.matched = true;
    result.bindingNames = bound !== null ? bound.names : NO_BINDINGS;
    result.bindingValues = bound !== null ? bound.values : NO_BINDINGS;
    result.winner = templateWinner >= 0 ? templateWinner : hits[0];
    bag.merge(this.specAttributes);
    if (templateWinner >= 0) bag.merge(unchecked(this.patterns[templateWinner]).attributes);
    for (let i = 0; i < hits.length; i++) bag.merge(this.patterns[hits[i]].attributes);
    return result;
  }
}
