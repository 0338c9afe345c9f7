import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_DEBUG_TARGET, debugAddress } from "./debug_address.ts";
import { DEFAULT_HTTP_ADDR } from "../../../discovery/options.ts";
import { CLUSTER_SCOPED_KINDS } from "../../../config/catalog.ts";
import { formatGoDuration } from "../../../daemon/duration.ts";
import { EXIT_BAD_CONFIG } from "../../../daemon/exit_codes.ts";
import { durationFlag } from "../../../daemon/flags.ts";
import { globalFlags } from "../global_flags.ts";
import type { MeshctlIo } from "../io.ts";
import { matchKind, runWait, splitNameNamespace } from "../wait.ts";

const DEFAULT_TIMEOUT_MS = 30_000;
/** Upstream polls once a second. */
const POLL_MS = 1000;

function ratio(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number such as 1 or .99, got ${JSON.stringify(value)}`);
  return n;
}

function generation(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`expected a generation (a whole number), got ${JSON.stringify(value)}`);
  return n;
}

interface WaitFlags {
  for: string;
  resourceVersion: string[];
  generation?: number;
  threshold: number;
  timeout: number;
  debugAddress: Array<{ host: string; port: number }>;
  verbose: boolean;
}

/** `meshctl experimental wait <type> <name>[.<namespace>]` (docs/meshctl.md#x-wait). */
export function registerWait(experimental: Command, io: MeshctlIo): void {
  experimental
    .command("wait")
    .description("Wait until a resource is distributed to the proxies connected to disco-discovery (or removed from them)")
    .argument("<type>", "the resource's kind: virtualservice, authorizationpolicy, … (case and dashes ignored)")
    .argument("<name>", "<name>[.<namespace>] (namespace: -n, else default)")
    .addOption(new Option("--for <condition>", "wait condition, must be 'distribution' or 'delete'").default("distribution"))
    .option(
      "--resource-version <version>",
      "wait for this version of the resource (disco-discovery's /debug/configz resourceVersion) rather than the current one; repeatable",
      (v: string, p: string[]) => [...p, v],
      [],
    )
    .option("--generation <n>", "wait for this generation of the resource rather than the current one", generation)
    .option("--threshold <ratio>", "the ratio of distribution required for success", ratio, 1)
    .addOption(
      new Option("--timeout <duration>", "the duration to wait before failing")
        .argParser(durationFlag)
        .default(DEFAULT_TIMEOUT_MS, formatGoDuration(DEFAULT_TIMEOUT_MS)),
    )
    .option(
      "--debugAddress <host:port>",
      `disco-discovery's debug address (its --httpAddr); repeat for every replica (default ${DEFAULT_HTTP_ADDR})`,
      debugAddress,
    )
    .addOption(new Option("-v, --verbose", "print each poll's result").default(false).hideHelp())
    .action(async (type: string, nameArg: string, opts: WaitFlags, cmd: Command) => {
      const usage = (message: string) => {
        io.stderr.write(`Error: meshctl x wait: ${message}\n`);
        io.exitCode = EXIT_BAD_CONFIG;
      };
      if (opts.for !== "distribution" && opts.for !== "delete") return usage(`--for must be 'delete' or 'distribution', got: ${opts.for}`);
      const kind = matchKind(type);
      if (!kind) return usage(`type ${type} is not recognized`);
      const fallback = globalFlags(cmd).namespace || "default";
      const { name, namespace } = splitNameNamespace(nameArg, fallback);
      io.exitCode = await runWait(
        {
          for: opts.for,
          kind,
          name,
          namespace: CLUSTER_SCOPED_KINDS.has(kind) ? "" : namespace,
          resourceVersions: opts.resourceVersion,
          ...(opts.generation !== undefined ? { generation: opts.generation } : {}),
          threshold: opts.threshold,
          timeoutMs: opts.timeout,
          discovery: opts.debugAddress ?? [DEFAULT_DEBUG_TARGET()],
          pollMs: POLL_MS,
          verbose: opts.verbose,
        },
        io.stdout,
        io.stderr,
      );
    });
}
