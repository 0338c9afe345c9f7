// HTTPAPISpec `uriTemplate` parsing and matching (research note hub-client §3).
export { SegmentKind, TemplateSegment, TemplateVariable, UriTemplate } from "./uri_template";
export { TemplateParseResult, parseUriTemplate } from "./parse";
export { PathMatcher } from "./path_matcher";
export { ANY_METHOD } from "./trie_node";
export { TemplateMatch } from "./bindings";
