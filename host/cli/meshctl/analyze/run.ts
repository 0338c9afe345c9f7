import { readFileSync } from "node:fs";
import type { Writable } from "node:stream";
import { type AnyResource, type CatalogChecks, DEFAULT_NAMESPACE, decodeDocuments, filterChecks } from "../../../config/catalog.ts";
import type { SourceDocument } from "../../../config/documents.ts";
import { ConfigError } from "../../../config/errors.ts";
import type { ConfigProblem } from "../../../config/problems.ts";
import { STDIN_NAME, loadSources } from "../../../config/sources.ts";
import { FilterModule } from "../../../wasm/filter_module.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { formatGoDuration } from "../../../daemon/duration.ts";
import type { AnalysisContext, AnalysisMessage, Analyzer, MessageTarget } from "./analyzer.ts";
import { type Level, atLeast } from "./levels.ts";
import { type AnalyzeMeshConfig, defaultMeshConfig, readMeshConfig } from "./mesh_config.ts";
import { InternalError, messageTypeByCode } from "./messages.ts";
import { type Knowledge, buildModel } from "./model.ts";
import { type OutputFormat, formatMessages } from "./output.ts";
import { ANALYZERS, formatAnalyzerList } from "./registry.ts";
import { SourceLines } from "./source_lines.ts";
import { type Suppression, isSuppressed, parseSuppression } from "./suppress.ts";

/** Exit code when a message at or above `--failure-threshold` remains (upstream's ExitAnalyzerFoundIssues, for CI). */
export const EXIT_ANALYZER_FOUND_ISSUES = 79;
export const DEFAULT_TIMEOUT_MS = 30_000;

export const USE_KUBE_NOTICE =
  "meshctl analyze: --use-kube: no orchestrator API is available here, so only the given files are analyzed (offline, learning services, namespaces and workloads from their Service, Namespace, Pod and Deployment documents); pass --use-kube=false to silence this notice";

export interface AnalyzeOptions {
  /** Files, directories and `-` (stdin). */
  files: readonly string[];
  allNamespaces: boolean;
  color: boolean;
  failureThreshold: Level;
  outputThreshold: Level;
  listAnalyzers: boolean;
  meshConfigFile?: string;
  output: OutputFormat;
  recursive: boolean;
  /** Raw `-S` values. */
  suppress: readonly string[];
  timeoutMs: number;
  useKube: boolean;
  verbose: boolean;
  /** `-n`: namespace of documents without one, and the namespace analyzed without `-A`; default `default`. */
  namespace: string;
  /** `-i`: root namespace unless the mesh config names one. */
  meshNamespace: string;
  stdout: Writable;
  stderr: Writable;
  stdin?: () => string;
  checks?: CatalogChecks;
  now?: () => number;
  /** The wall clock, epoch milliseconds (default Date.now). */
  clock?: () => number;
  analyzers?: readonly Analyzer[];
}

const KNOWLEDGE_DOCS: Readonly<Record<Knowledge, string>> = { Service: "Service", Workload: "Pod or Deployment", Namespace: "Namespace" };

/**
 * `meshctl analyze <file|dir>…`: decodes the files through the catalog, runs
 * every analyzer, filters by namespace (`-A`), suppressions (`-S`) and
 * `--output-threshold`, prints, and returns the exit code: 79 when a message
 * at or above `--failure-threshold` remains after namespace filtering and
 * suppression (whether or not the output threshold shows it), 2 for usage
 * errors (flags, unreadable paths, mesh config), 1 on timeout, else 0.
 */
export function runAnalyze(o: AnalyzeOptions): number {
  const analyzers = o.analyzers ?? ANALYZERS;
  if (o.listAnalyzers) {
    o.stdout.write(formatAnalyzerList(analyzers));
    return EXIT_OK;
  }
  const now = o.now ?? (() => performance.now());
  const started = now();
  const timedOut = () => now() - started > o.timeoutMs;
  const usage = (text: string) => {
    o.stderr.write(`Error: meshctl analyze: ${text}\n`);
    return EXIT_BAD_CONFIG;
  };
  if (o.useKube) o.stderr.write(`${USE_KUBE_NOTICE}\n`);
  if (o.files.length === 0)
    return usage(
      "no files or directories to analyze: there is no orchestrator API here, so analyze works on files (meshctl analyze --use-kube=false <file|dir>…)",
    );

  let suppressions: Suppression[];
  try {
    suppressions = o.suppress.map(parseSuppression);
  } catch (e) {
    return usage((e as Error).message);
  }
  for (const s of suppressions) {
    if (!messageTypeByCode(s.code)) o.stderr.write(`Warning: supplied message code '${s.code}' is an unknown message code and will not have any effect\n`);
  }

  let config: AnalyzeMeshConfig;
  try {
    config = o.meshConfigFile ? readMeshConfig(o.meshConfigFile, o.meshNamespace) : defaultMeshConfig(o.meshNamespace);
  } catch (e) {
    if (e instanceof ConfigError) return usage(`--meshConfigFile: ${e.message}`);
    throw e;
  }

  const texts = new Map<string, string>();
  if (o.files.includes("-")) {
    try {
      texts.set(STDIN_NAME, o.stdin ? o.stdin() : readFileSync(0, "utf8"));
    } catch (e) {
      return usage(`cannot read stdin: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  }
  const loaded = loadSources(o.files, { recursive: o.recursive, stdin: () => texts.get(STDIN_NAME) ?? "" });
  if (loaded.unreadable.length > 0) {
    for (const u of loaded.unreadable) o.stderr.write(`Error: meshctl analyze: cannot read ${JSON.stringify(u.path)}: ${u.reason}\n`);
    return EXIT_BAD_CONFIG;
  }

  const defaultNamespace = o.namespace || DEFAULT_NAMESPACE;
  const checks = o.checks ?? filterChecks(FilterModule.load());
  const catalog = decodeDocuments(loaded.documents, checks, { defaultNamespace });
  const model = buildModel(catalog, loaded.documents, config, defaultNamespace);
  const lines = new SourceLines(texts);
  const locate = locator(loaded.documents, defaultNamespace, lines);

  const messages: AnalysisMessage[] = [];
  const context: AnalysisContext = {
    catalog,
    problems: [...loaded.problems, ...catalog.problems],
    model,
    now: o.clock ?? (() => Date.now()),
    regex: (pattern) => {
      const compiled = checks.compileRegex?.(pattern);
      return compiled && "matches" in compiled ? (input: string) => compiled.matches(input) : undefined;
    },
    report: (type, resource, text, fieldPath) => messages.push({ type, target: resourceTarget(resource), fieldPath, text }),
    reportRefused: (type, doc, text, fieldPath) =>
      messages.push({
        type,
        target: { kind: doc.kind, namespace: doc.namespace, name: doc.name, id: doc.id, file: doc.origin.file, index: doc.origin.index },
        fieldPath,
        text,
      }),
    reportProblem: (type, problem, text) => messages.push({ type, target: locate(problem), fieldPath: problem.fieldPath, text }),
  };
  const executed: Analyzer[] = [];
  const skipped: Array<{ analyzer: Analyzer; missing: Knowledge[] }> = [];
  for (const analyzer of analyzers) {
    if (timedOut()) {
      o.stderr.write(`Error: meshctl analyze: analysis did not finish within ${formatGoDuration(o.timeoutMs)} (--timeout)\n`);
      return EXIT_FAILURE;
    }
    const missing = analyzer.needs.filter((k) => !model.knows.has(k));
    if (missing.length > 0) {
      skipped.push({ analyzer, missing });
      continue;
    }
    executed.push(analyzer);
    try {
      analyzer.analyze(context);
    } catch (e) {
      messages.push({
        type: InternalError,
        target: { kind: "Analyzer", namespace: "", name: analyzer.name, id: `analyzer ${analyzer.name}` },
        text: `Internal error: ${(e as Error)?.stack ?? String(e)}`,
      });
    }
  }
  if (timedOut()) {
    o.stderr.write(`Error: meshctl analyze: analysis did not finish within ${formatGoDuration(o.timeoutMs)} (--timeout)\n`);
    return EXIT_FAILURE;
  }

  for (const m of messages) {
    const t = m.target;
    const line = t.line ?? (t.file !== undefined && t.index !== undefined ? lines.line(t.file, t.index, m.fieldPath) : undefined);
    m.reference = t.file === undefined ? undefined : line === undefined ? t.file : `${t.file}:${line}`;
  }
  const all = sortAndDedupe(messages);
  const target = o.allNamespaces ? "all namespaces" : `namespace: ${defaultNamespace}`;
  const inScope = o.allNamespaces ? all : all.filter((m) => m.target.namespace === "" || m.target.namespace === defaultNamespace);
  const kept = inScope.filter((m) => !isSuppressed(m, suppressions));
  const shown = kept.filter((m) => atLeast(m.type.level, o.outputThreshold));
  const failed = kept.some((m) => atLeast(m.type.level, o.failureThreshold));

  if (o.verbose) {
    o.stderr.write(`Analyzed ${loaded.documents.length} documents in ${target}\n`);
    o.stderr.write(`Executed analyzers:\n${executed.map((a) => `\t ${a.name}\n`).join("")}`);
    if (skipped.length > 0) {
      o.stderr.write(
        `Skipped analyzers:\n${skipped.map((s) => `\t ${s.analyzer.name} (no ${s.missing.map((k) => KNOWLEDGE_DOCS[k]).join(" or ")} documents in the input)\n`).join("")}`,
      );
    }
    if (kept.length < inScope.length) o.stderr.write(`Suppressed ${inScope.length - kept.length} messages (-S)\n`);
    o.stderr.write("\n");
  } else {
    // Namespace documents are rare in application manifests: skipping namespace-references goes unmentioned without -v.
    const notable = skipped.filter((s) => s.missing.some((k) => k !== "Namespace"));
    if (notable.length > 0) {
      const kinds = [...new Set(notable.flatMap((s) => s.missing.filter((k) => k !== "Namespace").map((k) => KNOWLEDGE_DOCS[k])))];
      const n = notable.length === 1 ? "1 analyzer" : `${notable.length} analyzers`;
      o.stderr.write(`Note: ${n} skipped: the input has no ${kinds.join(", ")} documents to learn services and workloads from (-v lists them)\n`);
    }
  }
  if (all.length > inScope.length) {
    const n = all.length - inScope.length;
    o.stderr.write(
      `Note: ${n === 1 ? "1 message concerns a resource" : `${n} messages concern resources`} outside namespace ${defaultNamespace}; use -A to analyze all namespaces\n`,
    );
  }

  if (o.output === "log" && shown.length === 0) {
    const hidden = kept.length - shown.length;
    const below = hidden > 0 ? ` (${hidden} below --output-threshold ${o.outputThreshold})` : "";
    o.stderr.write(`\u2714 No validation issues found when analyzing ${target}${below}.\n`);
  } else {
    o.stdout.write(formatMessages(shown, o.output, o.color));
  }
  if (failed) {
    o.stderr.write(`Error: Analyzers found issues when analyzing ${target}.\nSee docs/meshctl.md#analyze for more information about causes and resolutions.\n`);
    return EXIT_ANALYZER_FOUND_ISSUES;
  }
  return EXIT_OK;
}

function resourceTarget(r: AnyResource): MessageTarget {
  return { kind: r.kind, namespace: r.namespace, name: r.name, id: r.id, file: r.origin.file, index: r.origin.index };
}

/** The document a problem is about: `Kind ns/name`, `Kind name`, `[Kind ]document N` or `YAML document N`. */
function locator(documents: readonly SourceDocument[], defaultNamespace: string, lines: SourceLines): (p: ConfigProblem) => MessageTarget {
  const byId = new Map<string, SourceDocument>();
  for (const d of documents) {
    const id = d.kind === "Namespace" ? `${d.kind} ${d.name}` : `${d.kind} ${d.namespace ?? defaultNamespace}/${d.name}`;
    const key = `${d.file}\0${id}`;
    if (!byId.has(key)) byId.set(key, d);
  }
  return (p) => {
    const doc = byId.get(`${p.file}\0${p.resource}`);
    if (doc) {
      const ns = doc.kind === "Namespace" ? "" : (doc.namespace ?? defaultNamespace);
      return { kind: doc.kind, namespace: ns, name: doc.name, id: p.resource, file: p.file, index: doc.index };
    }
    const yamlDoc = /^YAML document (\d+)$/.exec(p.resource);
    if (yamlDoc) return { kind: "", namespace: "", name: "", id: p.resource, file: p.file, line: lines.yamlDocumentLine(p.file, Number(yamlDoc[1])) };
    const position = /(?:^|\s)document (\d+)$/.exec(p.resource);
    return { kind: "", namespace: "", name: "", id: p.resource, file: p.file, index: position ? Number(position[1]) - 1 : undefined };
  };
}

/** Reading order: file, line, then code and text; identical messages once. */
function sortAndDedupe(messages: readonly AnalysisMessage[]): AnalysisMessage[] {
  const lineOf = (m: AnalysisMessage) => Number(/:(\d+)$/.exec(m.reference ?? "")?.[1] ?? 0);
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const sorted = [...messages].sort(
    (a, b) =>
      cmp(a.target.file ?? "", b.target.file ?? "") ||
      lineOf(a) - lineOf(b) ||
      cmp(a.target.id, b.target.id) ||
      cmp(a.type.code, b.type.code) ||
      cmp(a.text, b.text),
  );
  const seen = new Set<string>();
  return sorted.filter((m) => {
    const key = `${m.type.code}\0${m.target.id}\0${m.reference}\0${m.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
