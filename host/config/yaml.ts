import { type Document, parse, parseAllDocuments, visit } from "yaml";

/**
 * How every YAML reader of the project parses, as the orchestrator's tools
 * do (go-yaml behind `kubectl`): anchors and aliases, and merge keys
 * (`<<: *base`, `<<: [*a, *b]`; keys written in the mapping win over merged
 * ones). JSON is YAML and reads the same.
 */
export const YAML_OPTIONS = Object.freeze({ merge: true, prettyErrors: true } as const);

/** One YAML document's value, or the first problem in it as one line. */
export type YamlValue = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * The documents of a multi-document text (`---`), each converted to plain
 * data or to a one-line problem: a syntax error, or an alias whose anchor
 * is not defined before it (`undefined alias *base`).
 */
export function yamlDocuments(text: string): YamlValue[] {
  const json = plainJson(text);
  if (json) return [{ ok: true, value: json.value }];
  const docs = parseAllDocuments(text, YAML_OPTIONS);
  return (Array.isArray(docs) ? docs : [docs]).map(documentValue);
}

/** One parsed document as a YamlValue. */
export function documentValue(doc: Document.Parsed): YamlValue {
  // An undefined alias first: a merge key on one otherwise reads as "merge sources must be maps".
  let undefinedAlias: string | undefined;
  visit(doc, {
    Alias(_, node) {
      if (undefinedAlias === undefined && node.resolve(doc) === undefined) undefinedAlias = node.source;
    },
  });
  if (undefinedAlias !== undefined) return { ok: false, message: aliasMessage(new Error(`Unresolved alias: ${undefinedAlias}`)) };
  if (doc.errors.length > 0) return { ok: false, message: doc.errors[0].message.split("\n")[0] };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 10_000 }) };
  } catch (e) {
    return { ok: false, message: aliasMessage(e as Error) };
  }
}

/** A single-document text (`parse`), throwing Error with the one-line problem. */
export function parseYaml(text: string): unknown {
  const json = plainJson(text);
  if (json) return json.value;
  try {
    // Aliases as documentValue allows them (a scenario file repeats its anchors many times).
    return parse(text, { ...YAML_OPTIONS, maxAliasCount: 10_000 });
  } catch (e) {
    throw new Error(aliasMessage(e as Error));
  }
}

function aliasMessage(e: Error): string {
  const unresolved = /^Unresolved alias[^:]*: (.*)$/.exec(e.message.split("\n")[0]);
  if (unresolved) return `undefined alias *${unresolved[1]} (an anchor &${unresolved[1]} must come before it)`;
  return e.message.split("\n")[0];
}

/**
 * A JSON text read by JSON.parse when that reads it as the YAML parser
 * would: the files programs write (simulate's configuration, bundles) are
 * JSON, and the YAML parser's first document costs tens of milliseconds of
 * CPU. Not taken for a text with a duplicate key (which YAML refuses and
 * JSON.parse would overwrite); a quoted `"<<"` is no merge key to YAML either.
 */
function plainJson(text: string): { value: unknown } | undefined {
  const first = /\S/.exec(text)?.[0];
  if (first !== "{" && first !== "[") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return hasDuplicateKey(text) ? undefined : { value };
}

/** Whether an object of a valid JSON text repeats a key. */
function hasDuplicateKey(json: string): boolean {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      let end = i + 1;
      while (json[end] !== '"') end += json[end] === "\\" ? 2 : 1;
      const keys = stack[stack.length - 1];
      if (keys && expectKey) {
        const raw = json.slice(i, end + 1);
        const key = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (keys.has(key)) return true;
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (c === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (c === "[") {
      stack.push(null);
    } else if (c === "}" || c === "]") {
      stack.pop();
    } else if (c === ",") {
      expectKey = stack[stack.length - 1] !== null;
    }
  }
  return false;
}
