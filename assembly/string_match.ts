import { Regex } from "./regex/index";

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
}
