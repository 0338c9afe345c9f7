import { type Command, InvalidArgumentError, Option } from "commander";
import { durationFlag } from "../../../daemon/flags.ts";
import { DEFAULT_TIMEOUT_MS, runAnalyze } from "../analyze/run.ts";
import { type Level, parseLevel } from "../analyze/levels.ts";
import { OUTPUT_FORMATS, type OutputFormat, colorEnabled } from "../analyze/output.ts";
import { globalFlags } from "../global_flags.ts";
import type { MeshctlIo } from "../io.ts";

interface AnalyzeFlags {
  allNamespaces: boolean;
  color?: BoolOrArg;
  failureThreshold: Level;
  listAnalyzers: boolean;
  meshConfigFile?: string;
  output: OutputFormat;
  outputThreshold: Level;
  recursive: boolean;
  suppress: string[];
  timeout: number;
  useKube: BoolOrArg;
  verbose: boolean;
}

/**
 * `--color` and `-k/--use-kube` take an optional value (`--use-kube=false`,
 * `-k=false`), so in `--use-kube a.yaml` the parser is handed the file: it is
 * kept and put back among the file arguments.
 */
type BoolOrArg = boolean | { argument: string };

function boolOrArg(value: string): BoolOrArg {
  const v = value.startsWith("=") ? value.slice(1) : value;
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  if (value.startsWith("=") || value.startsWith("-")) throw new InvalidArgumentError("expected true or false");
  return { argument: value };
}

function positiveDuration(value: string): number {
  const ms = durationFlag(value);
  if (ms <= 0) throw new InvalidArgumentError('expected a positive duration such as "30s"');
  return ms;
}

const EXAMPLES = `
Examples:
  # Analyze files and directories (there is no orchestrator API here)
  meshctl analyze --use-kube=false a.yaml b.yaml my-app-config/

  # Directories recursively, every namespace, JSON output
  meshctl analyze --use-kube=false -R -A -o json config/

  # Suppress MSH0127 for every AuthorizationPolicy in namespace testing
  meshctl analyze --use-kube=false -S "MSH0127=AuthorizationPolicy *.testing" config/

  # List the analyzers and their message codes
  meshctl analyze -L
`;

/** `meshctl analyze` and `meshctl experimental analyze` (spec 3; graduated, identical). */
export function registerAnalyze(program: Command, experimental: Command, io: MeshctlIo): void {
  for (const parent of [program, experimental]) {
    parent
      .command("analyze")
      .description(
        "Analyze mesh configuration files and print validation messages (offline: services, namespaces and workloads are learned from the Service, Namespace, Pod and Deployment documents of the same files)",
      )
      .argument("[files...]", "YAML or JSON files, directories (their .yaml, .yml and .json files) and - for stdin")
      .addOption(new Option("-A, --all-namespaces", "analyze all namespaces (default: the -n namespace, else default)").default(false))
      .addOption(
        new Option("--color [bool]", "color the level of log lines; default: on when stdout is a terminal; disable with --color=false or TERM=dumb").argParser(
          boolOrArg,
        ),
      )
      .addOption(
        new Option("--failure-threshold <level>", "severity at which the exit code is non-zero (79): Info, Warn or Error")
          .argParser(parseLevel)
          .default("Warning", "Warn"),
      )
      .addOption(new Option("-L, --list-analyzers", "list the analyzers and their message codes; suppresses normal execution").default(false))
      .addOption(
        new Option("--meshConfigFile <file>", "mesh config values: rootNamespace, enableAutoMtls, ingressControllerMode, ingressService, ingressSelector"),
      )
      .addOption(new Option("-o, --output <format>", "output format").choices(OUTPUT_FORMATS).default("log"))
      .addOption(
        new Option("--output-threshold <level>", "severity at which messages are displayed: Info, Warn or Error").argParser(parseLevel).default("Info"),
      )
      .addOption(new Option("-R, --recursive", "process directory arguments recursively").default(false))
      .addOption(
        new Option(
          "-S, --suppress <code=resource>",
          'suppress a message code on a resource, e.g. "MSH0101=VirtualService reviews.default"; * matches partially; repeatable',
        )
          .argParser((value: string, previous: string[] = []) => [...previous, value])
          .default([]),
      )
      .addOption(new Option("--timeout <duration>", "time to wait before failing").argParser(positiveDuration).default(DEFAULT_TIMEOUT_MS, "30s"))
      .addOption(
        new Option("-k, --use-kube [bool]", "use a live orchestrator: not available here, the files are analyzed offline; --use-kube=false silences the notice")
          .argParser(boolOrArg)
          .default(true),
      )
      .addOption(new Option("-v, --verbose", "list executed and skipped analyzers").default(false))
      .addHelpText("after", EXAMPLES)
      .action((files: string[], opts: AnalyzeFlags, cmd: Command) => {
        const args = [...files];
        const flag = (value: BoolOrArg | undefined): boolean | undefined => {
          if (typeof value === "object") {
            args.unshift(value.argument);
            return true;
          }
          return value;
        };
        const color = flag(opts.color);
        const useKube = flag(opts.useKube) ?? true;
        const globals = globalFlags(cmd);
        io.exitCode = runAnalyze({
          files: args,
          allNamespaces: opts.allNamespaces,
          color: colorEnabled(color, io.env, Boolean(io.stdout.isTTY)),
          failureThreshold: opts.failureThreshold,
          outputThreshold: opts.outputThreshold,
          listAnalyzers: opts.listAnalyzers,
          meshConfigFile: opts.meshConfigFile,
          output: opts.output,
          recursive: opts.recursive,
          suppress: opts.suppress,
          timeoutMs: opts.timeout,
          useKube,
          verbose: opts.verbose,
          namespace: globals.namespace,
          meshNamespace: globals.meshNamespace,
          stdout: io.stdout,
          stderr: io.stderr,
          stdin: io.stdinText,
        });
      });
  }
}
