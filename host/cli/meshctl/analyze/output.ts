import { stringify } from "yaml";
import type { AnalysisMessage } from "./analyzer.ts";
import type { Level } from "./levels.ts";

export const OUTPUT_FORMATS = ["log", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * One message as `-o json` and `-o yaml` print it (an array of these, in the
 * order of the log output). Keys and their order are stable:
 * - code: `MSH0101`
 * - level: `Info` | `Warning` | `Error`
 * - origin: `Kind namespace/name` (`Kind name` for cluster-scoped kinds)
 * - reference: `file:line` when the line is known, else `file`
 * - message: the text
 */
export interface MessageRecord {
  code: string;
  level: Level;
  origin: string;
  reference: string;
  message: string;
}

export function toRecord(m: AnalysisMessage): MessageRecord {
  return { code: m.type.code, level: m.type.level, origin: m.target.id, reference: m.reference ?? m.target.file ?? "", message: m.text };
}

const COLORS: Readonly<Record<Level, string>> = { Info: "", Warning: "\x1b[33m", Error: "\x1b[1;31m" };
const RESET = "\x1b[0m";

/** `Error [MSH0101] (VirtualService default/reviews vs.yaml:3) Referenced host not found: "x"`, the level colored when asked (upstream's colors). */
export function formatLogLine(m: AnalysisMessage, color: boolean): string {
  const level = m.type.level;
  const prefix = color && COLORS[level] ? `${COLORS[level]}${level}${RESET}` : level;
  const ref = m.reference ? ` ${m.reference}` : "";
  return `${prefix} [${m.type.code}] (${m.target.id}${ref}) ${m.text}`;
}

export function formatMessages(messages: readonly AnalysisMessage[], format: OutputFormat, color: boolean): string {
  if (format === "json") return `${JSON.stringify(messages.map(toRecord), null, 2)}\n`;
  if (format === "yaml") return messages.length === 0 ? "[]\n" : stringify(messages.map(toRecord), { lineWidth: 0 });
  return messages.map((m) => `${formatLogLine(m, color)}\n`).join("");
}

/**
 * Whether log lines are colored: `--color[=bool]` when given, else only when
 * stdout is a terminal and NO_COLOR is unset (what users expect from piped
 * output, as upstream does); `TERM=dumb` always turns color off (spec 3).
 */
export function colorEnabled(flag: boolean | undefined, env: NodeJS.ProcessEnv, stdoutIsTty: boolean): boolean {
  if ((env.TERM ?? "").toLowerCase() === "dumb") return false;
  if (flag !== undefined) return flag;
  return stdoutIsTty && !env.NO_COLOR;
}
