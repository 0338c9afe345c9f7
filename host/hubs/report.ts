import type { AttributeMap, CompressedAttributesMessage, GlobalDictionary } from "../wire/compressed.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";
import { checkGlobalWordCount, decodeOrReject } from "./check.ts";
import { INVALID_ATTRIBUTES, RpcError } from "./rpc_error.ts";

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

/** An entry of a batch the hub did not take, and why. */
export interface RefusedEntry {
  index: number;
  reason: string;
}

/** What a ReportRequest yields: the entries taken and those refused. */
export interface DecodedReport {
  entries: AttributeMap[];
  refused: RefusedEntry[];
}

/** Strings of the raw request that are not valid UTF-8 (utf8_strings.ts `invalidReportStrings`). */
export interface InvalidReportStrings {
  entries: ReadonlyMap<number, string>;
  defaultWords: ReadonlySet<number>;
}

const NONE: InvalidReportStrings = { entries: new Map(), defaultWords: new Set() };

/**
 * The attributes of every reported request in a batch. Entries without words
 * of their own use `default_words`. INDEPENDENT_ENCODING: each entry is
 * complete; DELTA_ENCODING: each entry is applied onto the previous taken
 * one's attributes (values can change, not be deleted).
 *
 * An entry that cannot be taken — an unknown word, a string that is not
 * valid UTF-8 (its own, or a default word it uses) — is refused alone, named
 * in `refused` (`attributes[3]: …`); the others are taken. Only when no entry
 * can be taken does it throw RpcError INVALID_ARGUMENT, naming the first.
 */
export function decodeReport(request: ReportRequestMessage, dictionary: GlobalDictionary, invalid: InvalidReportStrings = NONE): DecodedReport {
  checkGlobalWordCount(request.globalWordCount ?? 0, dictionary);
  const entries = request.attributes ?? [];
  const defaultWords = request.defaultWords ?? [];
  const delta = (request.repeatedAttributesSemantics ?? DELTA_ENCODING) === DELTA_ENCODING;
  const out: AttributeMap[] = [];
  const refused: RefusedEntry[] = [];
  let previous: AttributeMap | undefined;
  entries.forEach((entry, i) => {
    const where = `attributes[${i}]: `;
    const bad = invalid.entries.get(i) ?? usedInvalidWord(entry, invalid.defaultWords);
    if (bad !== undefined) {
      refused.push({ index: i, reason: `${INVALID_ATTRIBUTES}: ${where}${bad} is not valid UTF-8` });
      return;
    }
    const base: AttributeMap = delta && previous ? new Map(previous) : new Map();
    try {
      previous = decodeOrReject(entry, dictionary, defaultWords, where, base);
      out.push(previous);
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      refused.push({ index: i, reason: e.message });
    }
  });
  if (out.length === 0 && refused.length > 0) throw new RpcError(GRPC_CODES.INVALID_ARGUMENT, refused[0].reason);
  return { entries: out, refused };
}

// An entry without words of its own that points at an invalid default word.
function usedInvalidWord(entry: CompressedAttributesMessage, invalidWords: ReadonlySet<number>): string | undefined {
  if (invalidWords.size === 0 || (entry.words?.length ?? 0) > 0) return undefined;
  const bad = (index: number | string) => {
    const i = Number(index);
    return i < 0 && invalidWords.has(-i - 1);
  };
  for (const [k, v] of Object.entries(entry.strings ?? {})) if (bad(k) || bad(v as number)) return `default_words[${-Math.min(Number(k), Number(v)) - 1}]`;
  for (const [k, m] of Object.entries(entry.stringMaps ?? {})) {
    if (bad(k)) return `default_words[${-Number(k) - 1}]`;
    for (const [mk, mv] of Object.entries(m?.entries ?? {})) if (bad(mk) || bad(mv as number)) return `default_words[${-Math.min(Number(mk), Number(mv)) - 1}]`;
  }
  for (const member of ["int64s", "doubles", "bools", "timestamps", "durations", "bytes"] as const) {
    for (const k of Object.keys((entry as Record<string, object | null | undefined>)[member] ?? {})) if (bad(k)) return `default_words[${-Number(k) - 1}]`;
  }
  return undefined;
}
