import type { AttributeMap, CompressedAttributesMessage, GlobalDictionary } from "../wire/compressed.ts";
import { checkGlobalWordCount, decodeOrReject } from "./check.ts";

/** ReportRequest.RepeatedAttributesSemantics. */
export const DELTA_ENCODING = 0;
export const INDEPENDENT_ENCODING = 1;

/** `mesh.hub.v1.ReportRequest` as protobufjs decodes it. */
export interface ReportRequestMessage {
  attributes?: CompressedAttributesMessage[] | null;
  repeatedAttributesSemantics?: number | null;
  defaultWords?: string[] | null;
  globalWordCount?: number | null;
}

/**
 * The attributes of every reported request in a batch. Entries without words
 * of their own use `default_words`. INDEPENDENT_ENCODING: each entry is
 * complete; DELTA_ENCODING: each entry is applied onto the previous one's
 * attributes (values can change, not be deleted). Throws RpcError
 * INVALID_ARGUMENT naming the entry (`attributes[3]: …`).
 */
export function decodeReport(request: ReportRequestMessage, dictionary: GlobalDictionary): AttributeMap[] {
  checkGlobalWordCount(request.globalWordCount ?? 0, dictionary);
  const entries = request.attributes ?? [];
  const defaultWords = request.defaultWords ?? [];
  const delta = (request.repeatedAttributesSemantics ?? DELTA_ENCODING) === DELTA_ENCODING;
  const out: AttributeMap[] = [];
  let previous: AttributeMap | undefined;
  entries.forEach((entry, i) => {
    const base: AttributeMap = delta && previous ? new Map(previous) : new Map();
    previous = decodeOrReject(entry, dictionary, defaultWords, `attributes[${i}]: `, base);
    out.push(previous);
  });
  return out;
}
