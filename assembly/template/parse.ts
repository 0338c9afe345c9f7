// Parser for HTTPAPISpec `uriTemplate`s.
//
// The proto cites RFC 6570, but upstream (istio/proxy
// src/istio/api_spec/http_template.cc, the Google API HTTP-rule template
// language) parses this grammar instead, and so do we:
//
//   Template  = "/" Segments [ ":" Verb ] ;
//   Segments  = Segment { "/" Segment } ;
//   Segment   = "*" | "**" | Literal | Variable ;
//   Variable  = "{" FieldPath [ "=" Segments ] "}" ;   {x} means {x=*}
//   FieldPath = Ident { "." Ident } ;
//   Verb      = Literal ;
//
// plus: after `**` only literal segments may follow, and variables cannot nest.
// Deliberately stricter than upstream, so that mistakes are reported at load
// time instead of becoming patterns that never match:
//   - Ident is [A-Za-z0-9_]+ (the protobuf field-name alphabet). Upstream took
//     any run of characters, which let RFC 6570 forms like `{?q}` and
//     `{term:1}` through as odd variable names.
//   - a Literal is a non-empty run of characters other than `/ : { } ?` that
//     does not start with `*`. Upstream accepted `{` inside literals (`a{x=b`),
//     which hid unbalanced braces, and `?`, which never matches because the
//     query string is cut off before matching.
//
// Errors are values (a throw would trap the module): the message says what is
// wrong and at which 0-based position of the text.

import { SegmentKind, TemplateSegment, TemplateVariable, UriTemplate } from "./uri_template";

const SLASH: i32 = 0x2f; // '/'
const COLON: i32 = 0x3a; // ':'
const STAR: i32 = 0x2a; // '*'
const OPEN_BRACE: i32 = 0x7b; // '{'
const CLOSE_BRACE: i32 = 0x7d; // '}'
const EQUALS: i32 = 0x3d; // '='
const DOT: i32 = 0x2e; // '.'
const QUESTION: i32 = 0x3f; // '?'
const END: i32 = -1;

/** Either a template, or an error message saying what is wrong and where. */
export class TemplateParseResult {
  constructor(
    public readonly template: UriTemplate | null,
    /** "" when `template` is set. */
    public readonly error: string,
  ) {}
}

/**
 * Parses an HTTPAPISpec `uriTemplate`. Never throws.
 * Example: `parseUriTemplate("/shelves/{shelf}/books/{book=**}:list")` yields
 * segments `shelves`, `*`, `books`, `**`, the verb `list` and the variables
 * `shelf` (segment 1) and `book` (segment 3 to the end).
 */
export function parseUriTemplate(text: string): TemplateParseResult {
  const parser = new TemplateParser(text);
  if (!parser.parseTemplate()) {
    return new TemplateParseResult(null, 'invalid uriTemplate "' + text + '": ' + parser.error);
  }
  return new TemplateParseResult(
    new UriTemplate(text, parser.segments, parser.verb, parser.variables),
    "",
  );
}

// One parse: a cursor over the text, the parts found so far, and the first
// error. Every parse method returns false once `error` is set.
class TemplateParser {
  position: i32 = 0;
  segments: Array<TemplateSegment> = [];
  verb: string = "";
  variables: Array<TemplateVariable> = [];
  error: string = "";
  // Set while inside `{...}`: variables cannot nest.
  inVariable: bool = false;
  // Set once a `**` was parsed: only literals may follow it.
  afterDoubleStar: bool = false;

  constructor(private readonly text: string) {}

  parseTemplate(): bool {
    if (this.text.length == 0) return this.fail("empty template", 0);
    if (this.peek() != SLASH) return this.fail("missing leading '/'", 0);
    this.position++;
    if (!this.parseSegments()) return false;
    const next = this.peek();
    if (next == COLON) {
      this.position++;
      if (!this.parseVerb()) return false;
    } else if (next == CLOSE_BRACE) {
      return this.fail("unbalanced '}'", this.position);
    }
    // parseSegments and parseVerb stop only at the end or at one of these.
    return true;
  }

  private parseSegments(): bool {
    if (!this.parseSegment()) return false;
    while (this.peek() == SLASH) {
      this.position++;
      if (!this.parseSegment()) return false;
    }
    return true;
  }

  // Parses one segment and checks that what follows can end it.
  private parseSegment(): bool {
    const start = this.position;
    const first = this.peek();
    if (first == STAR) {
      if (this.peekAt(start + 1) == STAR) {
        this.position += 2;
        if (!this.addSegment(SegmentKind.DoubleStar, "**", start)) return false;
        this.afterDoubleStar = true;
      } else {
        this.position += 1;
        if (!this.addSegment(SegmentKind.Star, "*", start)) return false;
      }
      if (!this.atSegmentEnd()) return this.fail("a wildcard must occupy a whole segment", this.position);
      return true;
    }
    if (first == CLOSE_BRACE && !this.inVariable) return this.fail("unbalanced '}'", start);
    if (first == OPEN_BRACE) {
      if (this.inVariable) return this.fail("nested variable", start);
      if (!this.parseVariable()) return false;
      if (!this.atSegmentEnd()) return this.fail("a variable must occupy a whole segment", this.position);
      return true;
    }
    const literal = this.parseLiteral();
    if (literal.length == 0) {
      // parseLiteral only fails with an empty result when it set the error.
      if (this.error.length > 0) return false;
      return this.fail("empty segment", start);
    }
    return this.addSegment(SegmentKind.Literal, literal, start);
  }

  // `{` FieldPath [ `=` Segments ] `}`, at a `{`.
  private parseVariable(): bool {
    const open = this.position;
    this.position++;
    const name = this.parseFieldPath(open);
    if (name.length == 0) return false;
    const startSegment = this.segments.length;
    const wasAfterDoubleStar = this.afterDoubleStar;
    if (this.peek() == EQUALS) {
      this.position++;
      this.inVariable = true;
      if (!this.parseSegments()) return false;
      this.inVariable = false;
    } else if (!this.addSegment(SegmentKind.Star, "*", open)) {
      return false;
    }
    const next = this.peek();
    if (next == COLON) return this.fail("':' may only introduce the final verb", this.position);
    if (next == END) return this.fail("unclosed '{'", open);
    // Segments stop only at `/`, `:`, `}` or the end, so this is the `}`.
    this.position++;
    const hasDoubleStar = this.afterDoubleStar && !wasAfterDoubleStar;
    this.variables.push(new TemplateVariable(name, startSegment, this.segments.length, hasDoubleStar));
    return true;
  }

  // Ident { `.` Ident }, returned as written; "" after an error.
  // (Loops avoid `for (;;) { ... break; }`, which asc 0.27 miscompiles.)
  private parseFieldPath(open: i32): string {
    const start = this.position;
    do {
      const identStart = this.position;
      while (isIdentChar(this.peek())) this.position++;
      if (this.position == identStart) {
        const next = this.peek();
        if (next == END) this.fail("unclosed '{'", open);
        else if ((next == CLOSE_BRACE || next == EQUALS) && identStart == start) this.fail("empty variable name", identStart);
        else if (next == CLOSE_BRACE || next == DOT || next == EQUALS) this.fail("empty field name", identStart);
        else this.failOnChar("in variable name", identStart);
        return "";
      }
    } while (this.consume(DOT));
    const next = this.peek();
    if (next == EQUALS || next == CLOSE_BRACE) return this.text.substring(start, this.position);
    if (next == END) this.fail("unclosed '{'", open);
    else this.failOnChar("in variable name", this.position);
    return "";
  }

  // The verb, after the `:`: a literal that must end the template.
  private parseVerb(): bool {
    const start = this.position;
    if (this.peek() == STAR) return this.fail("the verb must be a literal, not a wildcard", start);
    if (this.peek() == OPEN_BRACE) return this.fail("the verb must be a literal, not a variable", start);
    const verb = this.parseLiteral();
    if (verb.length == 0) {
      if (this.error.length > 0) return false;
      if (this.peek() == CLOSE_BRACE) return this.fail("unbalanced '}'", start);
      return this.fail("empty verb", start);
    }
    const next = this.peek();
    if (next == COLON) return this.fail("':' may only introduce the final verb", this.position);
    if (next != END) return this.fail("the verb must end the template", this.position);
    this.verb = verb;
    return true;
  }

  // A run of literal characters; "" when there is none or a character is
  // not allowed (then `error` is set).
  private parseLiteral(): string {
    const start = this.position;
    let c = this.peek();
    while (c != END && c != SLASH && c != COLON && c != CLOSE_BRACE) {
      if (c == OPEN_BRACE) {
        this.fail("a variable must occupy a whole segment", this.position);
        return "";
      }
      if (c == QUESTION) {
        this.fail("'?' can never match (the query string is not part of the matched path)", this.position);
        return "";
      }
      c = this.peekAt(++this.position);
    }
    return this.text.substring(start, this.position);
  }

  private addSegment(kind: SegmentKind, text: string, at: i32): bool {
    if (this.afterDoubleStar && kind != SegmentKind.Literal) {
      return this.fail("only literal segments may follow '**'", at);
    }
    this.segments.push(new TemplateSegment(kind, text));
    return true;
  }

  // A segment ends at `/`, at `:` (verb or error), at `}` (end of a variable,
  // or unbalanced) or at the end of the text.
  private atSegmentEnd(): bool {
    const c = this.peek();
    return c == END || c == SLASH || c == COLON || c == CLOSE_BRACE;
  }

  private consume(c: i32): bool {
    if (this.peek() != c) return false;
    this.position++;
    return true;
  }

  private peek(): i32 {
    return this.peekAt(this.position);
  }

  private peekAt(index: i32): i32 {
    return index < this.text.length ? <i32>this.text.charCodeAt(index) : END;
  }

  private fail(what: string, at: i32): bool {
    if (this.error.length == 0) this.error = what + " at position " + at.toString();
    return false;
  }

  private failOnChar(where: string, at: i32): bool {
    return this.fail("invalid character '" + this.text.charAt(at) + "' " + where, at);
  }
}

// [A-Za-z0-9_]
function isIdentChar(c: i32): bool {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c == 0x5f;
}
