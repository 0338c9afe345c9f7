// Exports of the URI-template parser for hosts that call the module directly
// (configuration validation).
import { parseUriTemplate } from "../template";
import { collectGarbageIfDue } from "../collection";

/**
 * "" if `text` is a valid HTTPAPISpec uriTemplate, otherwise the parse error.
 * Example: template_check("/a//b") is
 * `invalid uriTemplate "/a//b": empty segment at position 3`.
 */
export function template_check(text: string): string {
  collectGarbageIfDue();
  return parseUriTemplate(text).error;
}
