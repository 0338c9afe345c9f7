import type { ConfigProblem } from "../../../../config/problems.ts";
import type { Analyzer } from "../analyzer.ts";
import { InvalidRegexp } from "../messages.ts";

/**
 * A `regex` (HTTPAPISpec pattern, StringMatch of a QuotaSpec or hub rule) that
 * the filter's linear-time engine refuses: backreferences, lookaround and the
 * like. The catalog checks every regex with the filter's own engine; the
 * document is refused, so this is an Error (upstream's IST0122 is a Warning
 * because its proxy only drops the route).
 */
export function isRegexRefusal(p: ConfigProblem): boolean {
  return p.severity === "error" && /(^|\.)regex$/.test(p.fieldPath) && !p.message.startsWith("expected ");
}

export const regexAnalyzer: Analyzer = {
  name: "regex",
  upstream: "virtualservice.RegexAnalyzer",
  description: "Regular expressions the filter's linear-time engine refuses",
  codes: [InvalidRegexp],
  needs: [],
  analyze(ctx) {
    for (const p of ctx.problems) if (isRegexRefusal(p)) ctx.reportProblem(InvalidRegexp, p, `Field ${p.fieldPath}: regular expression refused: ${p.message}`);
  },
};
