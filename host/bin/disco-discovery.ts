// disco-discovery: the control plane, serving the mesh over xDS (spec 2, "disco-discovery"; docs/discovery.md).
//   disco-discovery discovery [flags]     serve ADS from --configDir
//   disco-discovery version [-o json|yaml] [-s]
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { serveUntilSignal } from "../cli/daemon.ts";
import { formatGoDuration } from "../cli/duration.ts";
import { durationFlag } from "../cli/flags.ts";
import { standardProgram, usageError } from "../cli/program.ts";
import { DISCOVERY_NOT_APPLICABLE_FLAGS } from "../cli/spec_surface/disco_discovery.ts";
import { addNotApplicableFlags } from "../cli/spec_surface/not_applicable.ts";
import { addVersionCommand } from "../cli/version.ts";
import { filterChecks } from "../config/catalog.ts";
import { MODULE_PATH, moduleSource } from "../discovery/envoy_wasm.ts";
import { parseListenAddress } from "../discovery/listen_address.ts";
import * as d from "../discovery/options.ts";
import { startDiscovery } from "../discovery/server.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../mesh/policies.ts";
import { Logger } from "../telemetry/logger.ts";
import { addLoggingFlags, loggingOptionsFrom } from "../telemetry/logging_flags.ts";
import { FilterModule, RELEASE_WASM } from "../wasm/filter_module.ts";

const PROGRAM = "disco-discovery discovery";
const program = standardProgram(new Command("disco-discovery").description("Mesh control plane: serves the mesh over xDS"));

function addressFlag(value: string): string {
  parseListenAddress(value); // throws the expectation; commander names the flag
  return value;
}

/** DISCO_DEBOUNCE_AFTER and kin: a duration, or the default when unset. */
function durationVariable(name: string, fallbackMs: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallbackMs;
  try {
    return durationFlag(text);
  } catch (e) {
    usageError(PROGRAM, `${name}=${JSON.stringify(text)}: ${(e as Error).message}`);
  }
}

function registries(value: string): string[] {
  const list = value.split(",").map((r) => r.trim());
  for (const r of list) {
    if (r === "Orch") throw new Error("the Orch registry needs an orchestrator API, which is not reachable here: services come from --configDir (--registries Mock)");
    if (r === "Catalog") throw new Error("there is no catalog registry server: services come from --configDir (--registries Mock)");
    if (r !== "Mock") throw new Error(`expected Mock (Orch and Catalog need servers not reachable here), got ${JSON.stringify(r)}`);
  }
  return list;
}

const discovery = addLoggingFlags(
  program
    .command("discovery")
    .description("Starts the discovery service")
    .option("--configDir <dir>", "directory watched for config files: the mesh's resources, ServiceEntries and orchestrator documents (the registry here)", "")
    .option("--grpcAddr <address>", "plain-text xDS address; empty disables; port 0 picks a free one", addressFlag, d.DEFAULT_GRPC_ADDR)
    .option("--filterModule <path|url>", "where Envoy sidecars load the filter from: a path on the proxy, or an http(s) URL serving this build's filter.wasm (checked by its sha256)", MODULE_PATH)
    .option("--httpAddr <address>", "debug HTTP address (/debug/syncz, /debug/adsz, /debug/configz, /debug/resourcesz); empty disables", addressFlag, d.DEFAULT_HTTP_ADDR)
    .addOption(new Option("--registries <list>", "service registries: Mock (the --configDir documents); Orch and Catalog need servers not reachable here").argParser(registries))
    .addOption(new Option("--keepaliveInterval <duration>", "ping when idle").argParser(durationFlag).default(d.DEFAULT_KEEPALIVE_INTERVAL_MS, formatGoDuration(d.DEFAULT_KEEPALIVE_INTERVAL_MS)))
    .addOption(new Option("--keepaliveTimeout <duration>", "wait after a ping before closing").argParser(durationFlag).default(d.DEFAULT_KEEPALIVE_TIMEOUT_MS, formatGoDuration(d.DEFAULT_KEEPALIVE_TIMEOUT_MS))),
);
addNotApplicableFlags(discovery, DISCOVERY_NOT_APPLICABLE_FLAGS, PROGRAM);
discovery.action(async (opts: Record<string, unknown>) => {
  let logger: Logger;
  try {
    logger = new Logger(d.DISCOVERY_LOG_SCOPES, loggingOptionsFrom(opts, d.DISCOVERY_LOG_SCOPES));
  } catch (e) {
    usageError(PROGRAM, (e as Error).message);
  }
  if (!opts.configDir) usageError(PROGRAM, "--configDir: expected the directory of the mesh's configuration (no orchestrator API is reachable here)");
  const log = logger.scope("default");
  const debounceAfterMs = durationVariable("DISCO_DEBOUNCE_AFTER", d.DEFAULT_DEBOUNCE_AFTER_MS);
  const debounceMaxMs = durationVariable("DISCO_DEBOUNCE_MAX", d.DEFAULT_DEBOUNCE_MAX_MS);
  let server;
  try {
    server = await startDiscovery({
      configDir: opts.configDir as string,
      grpc: parseListenAddress(opts.grpcAddr as string),
      http: parseListenAddress(opts.httpAddr as string),
      rootNamespace: DEFAULT_ROOT_NAMESPACE,
      debounceAfterMs,
      debounceMaxMs,
      keepaliveIntervalMs: opts.keepaliveInterval as number,
      keepaliveTimeoutMs: opts.keepaliveTimeout as number,
      checks: filterChecks(FilterModule.load()),
      filterModule: moduleSource(opts.filterModule as string, () => createHash("sha256").update(readFileSync(RELEASE_WASM)).digest("hex")),
      log: logger.scope("ads"),
    });
  } catch (e) {
    log.error(`failed to start: ${(e as Error).message}`);
    logger.close();
    process.exit(1);
  }
  serveUntilSignal(d.LISTENING_LINE_PREFIX, server.listeners, () => server.close(), log, logger, () => server.reload());
});

addLoggingFlags(addVersionCommand(program));

await program.parseAsync(process.argv);
