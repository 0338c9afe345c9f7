import { readFileSync } from "node:fs";
import { yamlDocuments } from "./yaml.ts";
import { ConfigError } from "./errors.ts";

/** One resource document as read from a file, before decoding. */
export interface SourceDocument {
  file: string;
  /** 0-based position of the document in its file. */
  index: number;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  body: Record<string, unknown>;
}

/**
 * The resource documents in one parsed YAML/JSON value: a list (JSON array
 * or `kind: List` with `items`) is flattened; empty documents are dropped.
 */
export function flattenDocuments(value: unknown): unknown[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap(flattenDocuments);
  const obj = value as Record<string, unknown>;
  if (obj.kind === "List" && Array.isArray(obj.items)) return obj.items.flatMap(flattenDocuments);
  return [value];
}

/** `Kind namespace/name`: how errors and tools name a resource. */
export function resourceName(doc: Pick<SourceDocument, "kind" | "name" | "namespace">): string {
  return doc.namespace ? `${doc.kind} ${doc.namespace}/${doc.name}` : `${doc.kind} ${doc.name}`;
}

/**
 * Reads YAML (several documents separated by `---`) or JSON text into resource
 * documents. A JSON or YAML list, or a `kind: List` with `items`, is flattened.
 * Syntax errors and documents without apiVersion/kind/metadata.name fail with
 * the file and document position.
 */
export function parseDocuments(text: string, file: string): SourceDocument[] {
  const out: SourceDocument[] = [];
  const roots: unknown[] = [];
  for (const d of yamlDocuments(text)) {
    if (!d.ok) throw new ConfigError({ file }, `document ${roots.length + 1}`, "valid YAML or JSON", d.message);
    roots.push(d.value);
  }
  for (const raw of roots.flatMap(flattenDocuments)) {
    const position = `document ${out.length + 1}`;
    if (typeof raw !== "object" || raw === null) throw new ConfigError({ file }, position, "a resource object", typeof raw);
    const body = raw as Record<string, unknown>;
    const metadata = (body.metadata ?? {}) as Record<string, unknown>;
    for (const [field, value] of [
      ["apiVersion", body.apiVersion],
      ["kind", body.kind],
      ["metadata.name", metadata.name],
    ] as const) {
      if (typeof value !== "string" || value.length === 0) {
        throw new ConfigError({ file, resource: position }, field, "a non-empty string", value === undefined ? "nothing" : JSON.stringify(value));
      }
    }
    out.push({
      file,
      index: out.length,
      apiVersion: body.apiVersion as string,
      kind: body.kind as string,
      name: metadata.name as string,
      namespace: typeof metadata.namespace === "string" ? metadata.namespace : undefined,
      body,
    });
  }
  return out;
}

export function readDocuments(file: string): SourceDocument[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new ConfigError({ file }, "(file)", "a readable file", (e as NodeJS.ErrnoException).code ?? String(e));
  }
  return parseDocuments(text, file);
}
