// HTTPAPISpec `uriTemplate` parsing and matching (research note hub-client §3).
export { SegmentKind, TemplateSegment, TemplateVariable, UriTemplate } from "./uri_template";
export { TemplateParseResult, parseUriTemplate } from "./parse";
export { ANY_METHOD, PathMatcher } from "./path_matcher";
export { TemplateMatch } from "./bindings";
