import type { DecodeContext, Field } from "./decode.ts";
import { ConfigError, type ConfigOrigin, formatProblem } from "./errors.ts";

export type ProblemSeverity = "error" | "warning";

/**
 * One thing wrong (or suspicious) in a configuration document, in parts so
 * tools can print, filter or re-code it: `meshctl validate` prints
 * `Error: <file>: <resource>: <fieldPath>: <message>`.
 */
export interface ConfigProblem {
  readonly severity: ProblemSeverity;
  readonly file: string;
  /** `Kind namespace/name` (`Kind name` for cluster-scoped kinds), or `document N` when the document has no usable identity. */
  readonly resource: string;
  /** Dotted path from the document root, e.g. `spec.rules[0].from[1].source.ipBlocks[0]`; `(document)` or `(file)` for the whole. */
  readonly fieldPath: string;
  /** What was expected and what was found, e.g. `expected one of STRICT, PERMISSIVE, DISABLE, UNSET, got "strict"`. */
  readonly message: string;
}

/**
 * A decode context that collects errors instead of stopping at the first one.
 * Decoders written with `attempt`/`attemptEach` keep going past a bad part
 * when their context has an `errors` list, and throw the first ConfigError
 * (like every other decoder) when it has none.
 */
export interface CollectingContext extends DecodeContext {
  errors?: ConfigError[];
}

/**
 * Decodes one part of a document. In collecting mode a ConfigError is recorded
 * and `undefined` comes back in place of the value: the enclosing resource is
 * then invalid and dropped, so the hole is never seen by a consumer (hence the
 * declared type T). Outside collecting mode the error propagates.
 */
export function attempt<T>(field: Field, decode: (f: Field) => T): T {
  try {
    return decode(field);
  } catch (e) {
    const sink = (field.context as CollectingContext).errors;
    if (!(e instanceof ConfigError) || !sink) throw e;
    sink.push(e);
    return undefined as T;
  }
}

/** `attempt` for every item of a list (absent = empty); each bad item is its own problem and is left out. */
export function attemptEach<T>(list: Field, decode: (item: Field, index: number) => T, nonEmpty = false): T[] {
  // A value that is not a list is one problem; the rest of the document is still checked.
  const items = attempt(list, (l) => (nonEmpty ? l.nonEmptyList() : l.list())) ?? [];
  const out: T[] = [];
  items.forEach((item, i) => {
    const before = errorCount(item);
    const value = attempt(item, (f) => decode(f, i));
    if (errorCount(item) === before) out.push(value);
  });
  return out;
}

function errorCount(field: Field): number {
  return (field.context as CollectingContext).errors?.length ?? 0;
}

/**
 * True while no error has been collected for the document: checks across
 * several fields (a selector against template labels, weights adding up) run
 * only on complete values, so they never report a consequence of another error.
 */
export function noErrorsYet(field: Field): boolean {
  return errorCount(field) === 0;
}

/** A ConfigError as a problem: the text after `file: resource: path: `. */
export function problemFromError(e: ConfigError, fallback: ConfigOrigin & { file: string; resource: string }): ConfigProblem {
  const origin = { file: e.origin.file ?? fallback.file, resource: e.origin.resource ?? fallback.resource };
  const prefix = formatProblem(e.origin, e.fieldPath, "");
  const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return Object.freeze({ severity: "error", file: origin.file, resource: origin.resource, fieldPath: e.fieldPath || "(document)", message });
}

/**
 * A warning string pushed by `Field.warn` (`file: resource: path: text`) split
 * back into its parts. The path ends at the first `: ` outside brackets (map
 * keys in paths are bracketed and may contain anything).
 */
export function problemFromWarning(text: string, origin: { file: string; resource: string }): ConfigProblem {
  const prefix = `${origin.file}: ${origin.resource}: `;
  const rest = text.startsWith(prefix) ? text.slice(prefix.length) : text;
  let depth = 0;
  let split = -1;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i];
    if (c === "[") depth++;
    else if (c === "]") depth = Math.max(0, depth - 1);
    else if (depth === 0 && c === ":" && rest[i + 1] === " ") {
      split = i;
      break;
    }
  }
  const fieldPath = split < 0 ? "(document)" : rest.slice(0, split);
  const message = split < 0 ? rest : rest.slice(split + 2);
  return Object.freeze({ severity: "warning", file: origin.file, resource: origin.resource, fieldPath, message });
}

/** `<file>: <resource>: <field path>: <message>`, the form every tool prints. */
export function formatConfigProblem(p: ConfigProblem): string {
  return `${p.file}: ${p.resource}: ${p.fieldPath}: ${p.message}`;
}
