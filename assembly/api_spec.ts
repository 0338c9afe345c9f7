import { AttributeBag } from "./attributes/bag";
import { AttributeValue } from "./attributes/value";
import { ApiKeyLocation } from "./api_key";
import { sameBytesWordwise } from "./text";
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
  private readonly last: LastLookup = new LastLookup();

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
  applyValue(method: string, path: AttributeValue, bag: AttributeBag, wantBindings: bool, into: ApiMatch | null = null): ApiMatch {
    const patternCount = this.patterns.length;
    if (patternCount == 0) return NO_API_MATCH;
    let templateWinner = -1;
    let bound: TemplateMatch | null = null;
    const hits = this.regexHits;
    const ptr = path.textPtr();
    const len = path.textLen();
    const last = this.last;
    if (!wantBindings && last.holds(method, ptr, len, patternCount, this.regexes)) {
      // The same method and path as the last lookup: its winner, and its regex hits still in `hits`.
      templateWinner = last.templateWinner;
    } else {
      templateWinner = this.lookUp(method, path, wantBindings, hits);
      if (wantBindings) {
        bound = this.bound;
        this.bound = null;
      }
      last.keep(method, ptr, len, patternCount, this.regexes, templateWinner);
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

  // The template bindings of the last lookUp with wantBindings.
  private bound: TemplateMatch | null = null;

  // The template winner for method and path (-1: none), with the regex
  // patterns that match left in `hits`.
  private lookUp(method: string, path: AttributeValue, wantBindings: bool, hits: Array<i32>): i32 {
    let templateWinner = -1;
    if (wantBindings) {
      const bound = this.templates.bindingsBytes(method, path.textPtr(), path.textLen());
      if (bound !== null) templateWinner = bound.patternIndex;
      this.bound = bound;
    } else {
      templateWinner = this.templates.lookupBytes(method, path.textPtr(), path.textLen());
    }
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
    return templateWinner;
  }
}

// Paths longer than this are matched without being kept.
const LAST_PATH_LIMIT: usize = 512;

/**
 * The method and path of a spec's last lookup and its template winner (its
 * regex hits stay in the spec's list until the next lookup). Consecutive
 * requests often ask for the same path: a gRPC method is one path, a REST
 * service's hot endpoints a handful, probes and polls one each; such a
 * request skips the split, the trie walk and the regex automaton for a
 * compare of its bytes. The key includes what the spec holds (its pattern
 * count and regex set), so a spec still being compiled is never answered
 * from before a change. The method is compared by identity: a known method
 * is a shared string (request_derivation.ts); any other is never kept.
 */
class LastLookup {
  private method: string | null = null;
  private path: ArrayBuffer = new ArrayBuffer(64);
  private length: usize = 0;
  private patternCount: i32 = 0;
  private regexes: RegexSet | null = null;
  templateWinner: i32 = -1;

  // @ts-ignore: decorator
  @inline holds(method: string, ptr: usize, len: usize, patternCount: i32, regexes: RegexSet | null): bool {
    return (
      changetype<usize>(this.method) == changetype<usize>(method) &&
      this.length == len &&
      this.patternCount == patternCount &&
      this.regexes === regexes &&
      sameBytesWordwise(changetype<usize>(this.path), ptr, len)
    );
  }

  keep(method: string, ptr: usize, len: usize, patternCount: i32, regexes: RegexSet | null, templateWinner: i32): void {
    if (len > LAST_PATH_LIMIT) {
      this.method = null;
      return;
    }
    if (<i32>len > this.path.byteLength) this.path = new ArrayBuffer(<i32>LAST_PATH_LIMIT);
    memory.copy(changetype<usize>(this.path), ptr, len);
    this.method = method;
    this.length = len;
    this.patternCount = patternCount;
    this.regexes = regexes;
    this.templateWinner = templateWinner;
  }
}
