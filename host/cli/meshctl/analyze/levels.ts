import { InvalidArgumentError } from "commander";

/**
 * Message severities, worst last. Flags take Info, Warn (or Warning) and
 * Error in any case (spec 3); messages print `Info`, `Warning`, `Error` as
 * upstream's analyzer does.
 */
export const LEVELS = ["Info", "Warning", "Error"] as const;
export type Level = (typeof LEVELS)[number];

const BY_NAME: Readonly<Record<string, Level>> = { INFO: "Info", WARN: "Warning", WARNING: "Warning", ERROR: "Error" };

/** `--failure-threshold` / `--output-threshold` values. */
export function parseLevel(text: string): Level {
  const level = BY_NAME[text.trim().toUpperCase()];
  if (!level) throw new InvalidArgumentError(`expected one of Info, Warn, Error, got ${JSON.stringify(text)}`);
  return level;
}

/** Whether `level` is `threshold` or worse. */
export function atLeast(level: Level, threshold: Level): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(threshold);
}
