import { readFileSync, writeFileSync } from "node:fs";
import type { Writable } from "node:stream";
import { yamlDocuments } from "./yaml.ts";
import { ConfigError } from "./errors.ts";

/** What `-f -` reads; error messages name it like a file. */
export const STDIN_NAME = "<stdin>";

/** The text of an input file, or of stdin for `-`, and the name messages use for it. */
export function readSourceText(file: string, stdin: () => string = () => readFileSync(0, "utf8")): { name: string; text: string } {
  if (file === "-") return { name: STDIN_NAME, text: stdin() };
  try {
    return { name: file, text: readFileSync(file, "utf8") };
  } catch (e) {
    throw new ConfigError({ file }, "(file)", "a readable file", (e as NodeJS.ErrnoException).code ?? String(e));
  }
}

/**
 * One YAML or JSON object read from a settings file (`--meshConfigFile`,
 * `--valuesFile`, `--injectConfigFile`). An empty file is an empty object.
 */
export function readSettingsObject(file: string): Record<string, unknown> {
  const { name, text } = readSourceText(file);
  const values: unknown[] = [];
  for (const d of yamlDocuments(text)) {
    if (!d.ok) throw new ConfigError({ file: name }, "(document)", "valid YAML or JSON", d.message);
    if (d.value !== null && d.value !== undefined) values.push(d.value);
  }
  if (values.length > 1) throw new ConfigError({ file: name }, "(file)", "one YAML document", `${values.length} documents`);
  const value = values[0] ?? {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new ConfigError({ file: name }, "(document)", "an object", Array.isArray(value) ? "a list" : JSON.stringify(value));
  return value as Record<string, unknown>;
}

/** Writes the result to `-o FILE`, or to `stdout` for `-` (the default). */
export function writeOutput(target: string, text: string, stdout: Writable): void {
  if (target === "-" || target === "") {
    stdout.write(text);
    return;
  }
  try {
    writeFileSync(target, text);
  } catch (e) {
    throw new ConfigError({ file: target }, "(output file)", "a writable file", (e as NodeJS.ErrnoException).code ?? String(e));
  }
}
