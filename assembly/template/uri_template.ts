// The parsed form of an HTTPAPISpec `uriTemplate` (HTTP-rule grammar, see
// parse.ts). Built once at configuration time and only read afterwards.

/** What one template segment matches. */
export const enum SegmentKind {
  /** Exactly this text. */
  Literal = 0,
  /** `*`: any one request segment. */
  Star = 1,
  /** `**`: the rest of the path, see path_matcher.ts for how much. */
  DoubleStar = 2,
}

export class TemplateSegment {
  constructor(
    public readonly kind: SegmentKind,
    /** The literal text; "*" or "**" for the wildcards. */
    public readonly text: string,
  ) {}
}

/**
 * One `{field.path=...}` of the template. It covers the template segments
 * [startSegment, endSegment): `{x}` is one `*` segment, `{x=a/**}` two.
 */
export class TemplateVariable {
  constructor(
    /** The field path as written, e.g. "a.b.c". */
    public readonly name: string,
    public readonly startSegment: i32,
    public readonly endSegment: i32,
    /** True when the variable contains `**` (its length varies per request). */
    public readonly hasDoubleStar: bool,
  ) {}

  /**
   * Bindings of multi-segment variables keep reserved escapes (`%2F`) encoded
   * so the value still splits into the segments it covered (upstream ESP rule).
   */
  get coversManySegments(): bool {
    return this.hasDoubleStar || this.endSegment - this.startSegment > 1;
  }
}

export class UriTemplate {
  constructor(
    /** The source text, for messages. */
    public readonly text: string,
    /** Segments in order, with variables flattened into their own segments. */
    public readonly segments: Array<TemplateSegment>,
    /** The custom verb after the final `:`, or "" when there is none. */
    public readonly verb: string,
    public readonly variables: Array<TemplateVariable>,
  ) {}

  /** Index of the `**` segment, or -1. The grammar allows at most one. */
  doubleStarIndex(): i32 {
    const segments = this.segments;
    for (let i = 0, n = segments.length; i < n; i++) {
      if (unchecked(segments[i]).kind == SegmentKind.DoubleStar) return i;
    }
    return -1;
  }

  /**
   * The trie path this template occupies: variables reduced to their
   * segments, and the verb as one more literal segment because upstream's
   * matcher stores it that way (so `/a/{id}`, `/a/{name}` and `/a/*` share a
   * shape, and so do `/a:v` and `/a/v`). Two registrations with the same
   * method and shape key are duplicates.
   * Example: `/shelves:clear` has the shape key `/shelves/clear`.
   */
  shapeKey(): string {
    let key = "";
    const segments = this.segments;
    for (let i = 0, n = segments.length; i < n; i++) {
      key += "/" + unchecked(segments[i]).text;
    }
    if (this.verb.length > 0) key += "/" + this.verb;
    return key;
  }
}
