// Variable bindings of a matched template (research note hub-client §3.9).
// Each variable is bound to the request segments it covers, joined by `/`,
// percent-decoded as percent_decode.ts explains. Computed only on request,
// after a successful match: the match itself never builds strings.

import { decodeUtf8 } from "../utf8";
import { PercentDecoding, percentDecode } from "./percent_decode";
import { RequestSegments } from "./request_path";
import { UriTemplate } from "./uri_template";

/** The pattern a request matched, with its variables' values. */
export class TemplateMatch {
  constructor(
    public readonly patternIndex: i32,
    /** Variable field paths in template order, e.g. "shelf" or "a.b". */
    public readonly names: Array<string>,
    /** `values[i]` is the value of `names[i]`. */
    public readonly values: Array<string>,
  ) {}
}

/** Binds the variables of `template`, which matched `request`. */
export function bindVariables(template: UriTemplate, patternIndex: i32, request: RequestSegments): TemplateMatch {
  const variables = template.variables;
  const names = new Array<string>(variables.length);
  const values = new Array<string>(variables.length);
  const layout = new SegmentLayout(template, request.count);
  for (let i = 0, n = variables.length; i < n; i++) {
    const variable = unchecked(variables[i]);
    const first = layout.requestIndex(variable.startSegment);
    const last = layout.requestIndex(variable.endSegment); // exclusive
    let value = "";
    if (last > first) {
      // Segments are contiguous in the path and separated by single `/`s, so
      // the raw text from the first to the last is already `/`-joined.
      const start = request.start(first);
      const text = decodeUtf8(request.ptr + <usize>start, <usize>(request.end(last - 1) - start));
      value = percentDecode(text, 0, text.length, variable.coversManySegments ? PercentDecoding.AllButReserved : PercentDecoding.All);
    }
    unchecked((names[i] = variable.name));
    unchecked((values[i] = value));
  }
  return new TemplateMatch(patternIndex, names, values);
}

// Where template segments landed in the request. Before and at a `**` the
// template and request indexes agree; after it only literals follow (grammar
// rule), a fixed number, so they are counted back from the end of the
// request, which also holds the verb as its last segment. Upstream stored
// only a `**` variable's end this way and misplaced variables after it.
class SegmentLayout {
  private readonly doubleStar: i32;
  private readonly templateLength: i32;

  constructor(template: UriTemplate, private readonly requestLength: i32) {
    this.doubleStar = template.doubleStarIndex();
    this.templateLength = template.segments.length + (template.verb.length > 0 ? 1 : 0);
  }

  // Request index of template index `index` (a segment or an end boundary).
  requestIndex(index: i32): i32 {
    if (this.doubleStar < 0 || index <= this.doubleStar) return index;
    return this.requestLength - (this.templateLength - index);
  }
}
