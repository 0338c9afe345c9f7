import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { yamlDocuments } from "./yaml.ts";
import { type SourceDocument, flattenDocuments } from "./documents.ts";
import type { ConfigProblem } from "./problems.ts";

/** What a path argument may hold: YAML or JSON files. */
export const CONFIG_FILE_EXTENSIONS = [".yaml", ".yml", ".json"] as const;
/** How stdin (`-`) is named in problems. */
export const STDIN_NAME = "<stdin>";

export interface LoadOptions {
  /** Descend into subdirectories of directory arguments (top-level files only otherwise). */
  recursive?: boolean;
  /** Text of `-`; read from file descriptor 0 when not given. */
  stdin?: () => string;
}

export interface LoadedSources {
  documents: SourceDocument[];
  /** Syntax problems and documents without apiVersion/kind/metadata.name: the rest of the file is still read. */
  problems: ConfigProblem[];
  /** Paths that do not exist or cannot be read: a usage error for commands. */
  unreadable: Array<{ path: string; reason: string }>;
}

/**
 * Reads files, directories (their .yaml/.yml/.json files, sorted) and `-`
 * (stdin) into resource documents. Unlike `readDocuments`, one bad document
 * does not hide the others: it becomes a problem and reading goes on.
 *
 * @example const { documents, problems, unreadable } = loadSources(["config/", "-"], { recursive: true });
 */
export function loadSources(paths: readonly string[], options: LoadOptions = {}): LoadedSources {
  const out: LoadedSources = { documents: [], problems: [], unreadable: [] };
  for (const path of paths) {
    if (path === "-") {
      let text: string;
      try {
        text = options.stdin ? options.stdin() : readFileSync(0, "utf8");
      } catch (e) {
        out.unreadable.push({ path, reason: (e as NodeJS.ErrnoException).code ?? String(e) });
        continue;
      }
      addText(out, text, STDIN_NAME);
      continue;
    }
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) {
      out.unreadable.push({ path, reason: "no such file or directory" });
      continue;
    }
    const files = stat.isDirectory() ? listConfigFiles(path, options.recursive ?? false) : [path];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (e) {
        out.unreadable.push({ path: file, reason: (e as NodeJS.ErrnoException).code ?? String(e) });
        continue;
      }
      addText(out, text, file);
    }
  }
  return out;
}

function listConfigFiles(dir: string, recursive: boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) {
      if (recursive) out.push(...listConfigFiles(path, true));
    } else if (st?.isFile() && CONFIG_FILE_EXTENSIONS.some((e) => name.endsWith(e))) {
      out.push(path);
    }
  }
  return out;
}

function problem(file: string, resource: string, fieldPath: string, message: string): ConfigProblem {
  return Object.freeze({ severity: "error", file, resource, fieldPath, message });
}

/**
 * The documents of one text, as `parseDocuments` reads them (multi-document
 * YAML or JSON; lists and `kind: List` flattened), but tolerant: each bad
 * document is a problem of its own.
 */
export function parseSourceText(text: string, file: string): { documents: SourceDocument[]; problems: ConfigProblem[] } {
  const out = { documents: [] as SourceDocument[], problems: [] as ConfigProblem[], unreadable: [] };
  addText(out, text, file);
  return { documents: out.documents, problems: out.problems };
}

function addText(out: LoadedSources, text: string, file: string): void {
  let position = 0;
  for (const [i, d] of yamlDocuments(text).entries()) {
    if (!d.ok) {
      out.problems.push(problem(file, `YAML document ${i + 1}`, "(document)", `expected valid YAML or JSON, got ${d.message}`));
      continue;
    }
    let index = 0;
    for (const raw of flattenDocuments(d.value)) {
      index = position++;
      const where = `document ${index + 1}`;
      if (typeof raw !== "object" || raw === null) {
        out.problems.push(problem(file, where, "(document)", `expected a resource object, got ${typeof raw}`));
        continue;
      }
      const body = raw as Record<string, unknown>;
      const metadata = (typeof body.metadata === "object" && body.metadata !== null ? body.metadata : {}) as Record<string, unknown>;
      const missing = (
        [
          ["apiVersion", body.apiVersion],
          ["kind", body.kind],
          ["metadata.name", metadata.name],
        ] as const
      ).find(([, value]) => typeof value !== "string" || value.length === 0);
      if (missing) {
        const got = missing[1] === undefined ? "nothing" : JSON.stringify(missing[1]);
        const kind = typeof body.kind === "string" && body.kind ? `${body.kind} ` : "";
        out.problems.push(problem(file, `${kind}${where}`.trim(), missing[0], `expected a non-empty string, got ${got}`));
        continue;
      }
      out.documents.push({
        file,
        index,
        apiVersion: body.apiVersion as string,
        kind: body.kind as string,
        name: metadata.name as string,
        namespace: typeof metadata.namespace === "string" && metadata.namespace !== "" ? metadata.namespace : undefined,
        body,
      });
    }
  }
}
