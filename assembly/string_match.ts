import { AttributeValue } from "./attributes/value";
import { Regex } from "./regex/index";
import { bytesStartWithString } from "./text";

export const enum MatchKind {
  Exact,
  Prefix,
  Regex,
}

/** A compiled StringMatch (case-sensitive exact, prefix, or whole-value regex). */
export class StringMatch {
  constructor(
    public kind: MatchKind,
    public text: string,
    public regex: Regex | null,
  ) {}

  matches(value: string): bool {
    if (this.kind == MatchKind.Exact) return value == this.text;
    if (this.kind == MatchKind.Prefix) return value.startsWith(this.text);
    return (this.regex as Regex).fullMatch(value);
  }

  /** matches for a string value, read in place when it is a view (only a regex needs its text decoded). */
  // @ts-ignore: decorator
  @inline matchesValue(value: AttributeValue): bool {
    if (this.kind == MatchKind.Exact) return value.textEquals(this.text);
    if (this.kind == MatchKind.Prefix) return value.isView ? bytesStartWithString(value.textPtr(), value.textLen(), this.text) : value.str.startsWith(this.text);
    return (this.regex as Regex).fullMatch(value.str);
  }
}
