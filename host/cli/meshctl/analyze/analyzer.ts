import type { AnyResource, Catalog } from "../../../config/catalog.ts";
import type { ConfigProblem } from "../../../config/problems.ts";
import type { MessageType } from "./messages.ts";
import type { Knowledge, MeshModel, RefusedDocument } from "./model.ts";

/** The resource a message is about: a decoded resource, or a document named by a problem. */
export interface MessageTarget {
  readonly kind: string;
  /** "" for cluster-scoped kinds and documents without identity. */
  readonly namespace: string;
  readonly name: string;
  /** `Kind namespace/name` (`Kind name` when cluster-scoped; `document N` without identity). */
  readonly id: string;
  readonly file?: string;
  /** 0-based document position in the file, when known. */
  readonly index?: number;
  /** 1-based line, when already known (YAML syntax errors). */
  readonly line?: number;
}

/** One finding, before output filtering. */
export interface AnalysisMessage {
  readonly type: MessageType;
  readonly target: MessageTarget;
  /** Where in the resource, for the line number (`spec.gateways[0]`). */
  readonly fieldPath?: string;
  readonly text: string;
  /** Set when rendered: `file:line`, or `file`. */
  reference?: string;
}

export interface AnalysisContext {
  readonly catalog: Catalog;
  /** Problems of reading and decoding: YAML syntax, schema errors and warnings. */
  readonly problems: readonly ConfigProblem[];
  readonly model: MeshModel;
  /** The time, epoch milliseconds (certificate validity). */
  now(): number;
  /** The filter's regex engine: a full-match test, or undefined when it refuses the pattern. */
  regex(pattern: string): ((input: string) => boolean) | undefined;
  /** Reports a message about a decoded resource. */
  report(type: MessageType, resource: AnyResource, text: string, fieldPath?: string): void;
  /** Reports a message about a document the catalog refused (upstream's analyzers still look at it). */
  reportRefused(type: MessageType, doc: RefusedDocument, text: string, fieldPath?: string): void;
  /** Reports a message about a problem's document. */
  reportProblem(type: MessageType, problem: ConfigProblem, text: string): void;
}

/**
 * One check. Each lives in its own file under `analyzers/`, declares the
 * codes it may report, and what orchestrator knowledge it needs: without any
 * Service (or Pod/Deployment, or Namespace) document in the input it is
 * skipped rather than reporting every reference as missing.
 */
export interface Analyzer {
  /** Stable, kebab-case, e.g. `virtualservice-gateways`. */
  readonly name: string;
  /** Upstream's analyzer of the same checks (`gateway.IngressGatewayPortAnalyzer`); absent for this mesh's own. */
  readonly upstream?: string;
  readonly description: string;
  readonly codes: readonly MessageType[];
  readonly needs: readonly Knowledge[];
  analyze(context: AnalysisContext): void;
}
