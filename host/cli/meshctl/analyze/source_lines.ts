import { readFileSync } from "node:fs";
import { type Node, isMap, isPair, isScalar, isSeq, parseAllDocuments } from "yaml";
import { YAML_OPTIONS } from "../../../config/yaml.ts";

/**
 * Line numbers for message references (`file.yaml:12`): the line of a
 * document, or of a field inside it. Documents are counted as
 * `host/config/sources.ts` counts them (YAML documents, lists and
 * `kind: List` items flattened), so a catalog origin `{file, index}` finds
 * its node.
 */
export class SourceLines {
  private readonly files = new Map<string, FileLines | null>();

  /** @param texts texts already read (stdin), by the name messages use for them */
  constructor(private readonly texts: ReadonlyMap<string, string> = new Map()) {}

  /** 1-based line of document `index` of `file` (of its field `fieldPath` when found), or undefined. */
  line(file: string, index: number, fieldPath?: string): number | undefined {
    const f = this.load(file);
    const doc = f?.documents[index];
    if (!f || !doc) return undefined;
    const node = fieldPath ? (findField(doc, fieldPath) ?? doc) : doc;
    return f.lineAt(node.range?.[0] ?? 0);
  }

  /** 1-based line where YAML document `n` (1-based, before flattening) starts. */
  yamlDocumentLine(file: string, n: number): number | undefined {
    const f = this.load(file);
    const start = f?.yamlStarts[n - 1];
    return f && start !== undefined ? f.lineAt(start) : undefined;
  }

  private load(file: string): FileLines | null {
    if (!this.files.has(file)) {
      let text = this.texts.get(file);
      if (text === undefined) {
        try {
          text = readFileSync(file, "utf8");
        } catch {
          text = undefined;
        }
      }
      this.files.set(file, text === undefined ? null : new FileLines(text));
    }
    return this.files.get(file) ?? null;
  }
}

class FileLines {
  readonly documents: Node[] = [];
  readonly yamlStarts: number[] = [];
  private readonly lineStarts: number[] = [0];

  constructor(text: string) {
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") this.lineStarts.push(i + 1);
    const docs = parseAllDocuments(text, YAML_OPTIONS);
    for (const d of Array.isArray(docs) ? docs : [docs]) {
      const contents = d.contents as Node | null;
      this.yamlStarts.push(contents?.range?.[0] ?? d.range?.[0] ?? 0);
      if (d.errors.length > 0) continue;
      this.flatten(contents);
    }
  }

  lineAt(offset: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  // Mirrors the flattening of sources.ts: null documents vanish, lists and `kind: List` items are expanded.
  private flatten(node: Node | null | undefined): void {
    if (!node) return;
    if (isScalar(node) && (node.value === null || node.value === undefined)) return;
    if (isSeq(node)) {
      for (const item of node.items) this.flatten(item as Node);
      return;
    }
    if (isMap(node)) {
      const kind = node.get("kind");
      const items = node.get("items", true);
      if (kind === "List" && isSeq(items)) {
        for (const item of items.items) this.flatten(item as Node);
        return;
      }
    }
    this.documents.push(node);
  }
}

/** Walks `spec.rules[0].to[1]` or `spec.portLevelMtls[8080]` (bracketed map keys) to its node; the key's node for map members. */
function findField(root: Node, fieldPath: string): Node | undefined {
  const steps: Array<{ key: string; index: boolean }> = [];
  const re = /([^.[\]]+)|\[([^\]]*)\]/g;
  for (const m of fieldPath.matchAll(re)) steps.push(m[1] !== undefined ? { key: m[1], index: false } : { key: m[2], index: true });
  let node: Node | undefined = root;
  let at: Node | undefined = root;
  for (const step of steps) {
    if (!node) return at;
    if (isSeq(node) && step.index && /^\d+$/.test(step.key)) {
      node = node.items[Number(step.key)] as Node | undefined;
      at = node ?? at;
    } else if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === step.key);
      if (!pair) return at;
      at = (pair.key as Node) ?? at;
      node = pair.value as Node | undefined;
    } else {
      return at;
    }
  }
  return at;
}
