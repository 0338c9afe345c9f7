import { type Command, Option } from "commander";
import { stringify } from "yaml";
import pkg from "../../package.json" with { type: "json" };
import { parseBoolFlag } from "./flags.ts";

/** What `version` prints and `/version` serves. */
export interface BuildInfo {
  version: string;
  /** Source revision, from MESH_BUILD_REVISION at run time when set, else `unknown`. */
  revision: string;
  /** The Node.js runtime (upstream: golang_version). */
  node_version: string;
  status: string;
  tag: string;
}

export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return {
    version: pkg.version,
    revision: env.MESH_BUILD_REVISION || "unknown",
    node_version: process.version,
    status: "Clean",
    tag: pkg.version,
  };
}

/**
 * Text of `<program> version`: `-s` only the version; `-o json|yaml` the
 * whole BuildInfo (the version only with `-s`); otherwise one line per field.
 */
export function formatVersion(info: BuildInfo, output: string, short: boolean): string {
  if (output === "json") return `${JSON.stringify(short ? { version: info.version } : info, null, 2)}\n`;
  if (output === "yaml") return stringify(short ? { version: info.version } : info);
  if (short) return `${info.version}\n`;
  return `${Object.entries(info)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n")}\n`;
}

/** Adds `version` (`--output/-o yaml|json`, `--short/-s`, `--short=false`) to a program. */
export function addVersionCommand(program: Command, info: () => BuildInfo = buildInfo, out: { write(text: string): unknown } = process.stdout): Command {
  return program
    .command("version")
    .description("Prints out build version information")
    .addOption(new Option("-o, --output <format>", "one of 'yaml' or 'json'").choices(["yaml", "json", ""]).default(""))
    .addOption(new Option("-s, --short [bool]", "print only the version; use --short=false for full information").argParser(parseBoolFlag).default(false))
    .action((opts: { output: string; short: boolean }) => {
      out.write(formatVersion(info(), opts.output, opts.short));
    });
}
