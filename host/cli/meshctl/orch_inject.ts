import type { Writable } from "node:stream";
import { type Document, isCollection, parseAllDocuments } from "yaml";
import { YAML_OPTIONS, documentValue } from "../../config/yaml.ts";
import { Field } from "../../config/decode.ts";
import { resourceName } from "../../config/documents.ts";
import { ConfigError, formatProblem } from "../../config/errors.ts";
import { EXIT_BAD_CONFIG, EXIT_OK } from "../../daemon/exit_codes.ts";
import { readSettingsObject, readSourceText, writeOutput } from "../../config/source_text.ts";
import { injectPodTemplate } from "../../inject/inject_template.ts";
import { decodeInjectionSettings, type InjectionSettings, type SettingsSources } from "../../inject/settings.ts";
import { podTemplatePath } from "../../inject/workloads.ts";

export interface OrchInjectOptions {
  /** `-f`: input file, `-` for stdin. */
  filename: string;
  /** `-o`: output file, `-` (default) for stdout. */
  output?: string;
  injectConfigFile?: string;
  meshConfigFile?: string;
  valuesFile?: string;
  /** `--revision`: the control plane revision the sidecar joins. */
  revision?: string;
  stdout: Writable;
  stderr: Writable;
  stdin?: () => string;
}

/**
 * `meshctl orch-inject -f FILE`: writes the input documents with the sidecar
 * added to every injectable pod template, other documents unchanged and in
 * order. Returns the exit code: 0, or 2 for bad input (nothing is written).
 *
 * Example: `meshctl orch-inject -f deploy.yaml --valuesFile values.yaml -o injected.yaml`
 */
export function runOrchInject(o: OrchInjectOptions): number {
  try {
    const warnings: string[] = [];
    const settings = decodeInjectionSettings(readSettingsSources(o), warnings, undefined, o.revision);
    for (const w of warnings) o.stderr.write(`warning: ${w}\n`);
    const { name, text } = readSourceText(o.filename, o.stdin);
    const result = injectText(text, name, settings);
    for (const line of result.messages) o.stderr.write(`${line}\n`);
    writeOutput(o.output ?? "-", result.text, o.stdout);
    return EXIT_OK;
  } catch (e) {
    if (e instanceof ConfigError) {
      o.stderr.write(`error: ${e.message}\n`);
      return EXIT_BAD_CONFIG;
    }
    throw e;
  }
}

function readSettingsSources(o: OrchInjectOptions): SettingsSources {
  const read = (file: string | undefined) => (file === undefined ? undefined : { file, value: readSettingsObject(file) });
  return { injectConfig: read(o.injectConfigFile), meshConfig: read(o.meshConfigFile), values: read(o.valuesFile) };
}

/**
 * Injects into multi-document YAML (or JSON) text. Documents left alone are
 * copied byte for byte; edited ones are re-printed from their YAML tree, so
 * comments and key order survive. Messages (`skipped:`, `warning:`) are for stderr.
 */
export function injectText(text: string, file: string, settings: InjectionSettings): { text: string; messages: string[] } {
  const docs = parseAllDocuments(text, YAML_OPTIONS);
  const list = Array.isArray(docs) ? docs : [docs];
  const messages: string[] = [];
  const pieces: string[] = [];
  list.forEach((doc, i) => {
    const read = documentValue(doc);
    if (!read.ok) throw new ConfigError({ file }, `document ${i + 1}`, "valid YAML or JSON", read.message);
    const start = i === 0 ? 0 : doc.range[0];
    const end = i + 1 < list.length ? list[i + 1].range[0] : text.length;
    const original = text.slice(start, end);
    const changed = injectDocument(doc, file, i, settings, messages);
    pieces.push(changed ? printLike(doc, original) : original);
  });
  return { text: pieces.join(""), messages };
}

/** Injects into one YAML document (a workload, or a `kind: List` of them); true when it changed. */
function injectDocument(doc: Document, file: string, index: number, settings: InjectionSettings, messages: string[]): boolean {
  const value = doc.toJS() as unknown;
  if (value === null || value === undefined) return false;
  const position = `document ${index + 1}`;
  if (typeof value !== "object" || Array.isArray(value))
    throw new ConfigError({ file, resource: position }, "(document)", "a resource object", Array.isArray(value) ? "a list" : JSON.stringify(value));
  const body = value as Record<string, unknown>;
  const items: Array<{ base: (string | number)[]; value: unknown }> =
    body.kind === "List" && Array.isArray(body.items) ? body.items.map((item, j) => ({ base: ["items", j], value: item })) : [{ base: [], value: body }];
  let changed = false;
  for (const item of items) {
    const prefix = item.base.length > 0 ? `items[${item.base[1]}]` : "";
    const probe = Field.root(item.value, { file, resource: position, warnings: [] }, prefix);
    probe.object();
    const apiVersion = probe.get("apiVersion").nonEmptyString();
    const kind = probe.get("kind").nonEmptyString();
    const path = podTemplatePath(apiVersion, kind);
    if (!path) continue;
    const meta = probe.get("metadata");
    const name = meta.present && typeof meta.object().name === "string" ? (meta.object().name as string) : undefined;
    const namespace = meta.present && typeof meta.object().namespace === "string" ? (meta.object().namespace as string) : undefined;
    const resource = name ? resourceName({ kind, name, namespace }) : `${position} (${kind})`;
    const workload = Field.root(item.value, { file, resource, warnings: [] }, prefix);
    if (!changed && isCollection(doc.contents) && doc.contents.flow) {
      // JSON input: edit a block-style copy, so the injected document prints as ordinary YAML.
      doc.contents = doc.createNode(body) as typeof doc.contents;
    }
    const outcome = injectPodTemplate(doc, item.base, workload, path, settings);
    if (outcome.injected) {
      changed = true;
      for (const note of outcome.notes) messages.push(`warning: ${formatProblem({ file, resource }, prefix, note)}`);
    } else {
      messages.push(
        `${outcome.warning ? "warning" : "skipped"}: ${[file, resource, prefix].filter(Boolean).join(": ")}: ${outcome.warning ? "" : "skipping injection: "}${outcome.reason}`,
      );
    }
  }
  return changed;
}

/** Prints an edited document in the style of its source: sequence indentation, flow padding. */
function printLike(doc: Document, original: string): string {
  // kubectl's style (`key:\n- item`) unless the source indents its sequences (`key:\n  - item`).
  const indentSeq = /^( *)[^\s#-][^\n]*:[ \t]*\n\1 +- /m.test(original);
  return doc.toString({ indentSeq, flowCollectionPadding: false, lineWidth: 0 });
}
