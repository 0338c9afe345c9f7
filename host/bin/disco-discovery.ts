// disco-discovery: the control plane, serving the mesh over xDS (spec 2, "disco-discovery"; docs/discovery.md).
//   disco-discovery discovery [flags]     serve ADS from --configDir
//   disco-discovery version [-o json|yaml] [-s]
import { Command, Option } from "commander";
import { serveUntilSignal } from "../cli/daemon.ts";
import { formatGoDuration } from "../cli/duration.ts";
import { durationFlag } from "../cli/flags.ts";
import { addVersionCommand } from "../cli/version.ts";
import { filterChecks } from "../config/catalog.ts";
import { parseListenAddress } from "../discovery/listen_address.ts";
import * as d from "../discovery/options.ts";
import { startDiscovery } from "../discovery/server.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../mesh/policies.ts";
import { Logger } from "../telemetry/logger.ts";
import { addLoggingFlags, loggingOptionsFrom } from "../telemetry/logging_flags.ts";
import { FilterModule } from "../wasm/filter_module.ts";

const program = new Command("disco-discovery").description("Mesh control plane: serves the mesh over xDS").showHelpAfterError();

function addressFlag(value: string): string {
  parseListenAddress(value); // throws with the expectation; commander reports it naming the flag
  return value;
}

function durationFromEnv(name: string, fallbackMs: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallbackMs;
  try {
    return durationFlag(text);
  } catch (e) {
    throw new Error(`${name}: ${(e as Error).message}`);
  }
}

addLoggingFlags(
  program
    .command("discovery")
    .description("Starts the discovery service")
    .option("--configDir <dir>", "directory watched for config files (the mesh's resources and orchestrator documents)", "")
    .option("--grpcAddr <address>", "plain-text xDS address; empty disables", addressFlag, d.DEFAULT_GRPC_ADDR)
    .option("--httpAddr <address>", "debug HTTP address (/debug/syncz, /debug/adsz, /debug/configz); empty disables", addressFlag, d.DEFAULT_HTTP_ADDR)
    .option("--domain <suffix>", "DNS suffix", d.DEFAULT_DOMAIN)
    .option("--trust-domain <domain>", "SPIFFE identity domain", "")
    .addOption(new Option("--keepaliveInterval <duration>", "ping when idle").argParser(durationFlag).default(d.DEFAULT_KEEPALIVE_INTERVAL_MS, formatGoDuration(d.DEFAULT_KEEPALIVE_INTERVAL_MS)))
    .addOption(new Option("--keepaliveTimeout <duration>", "wait after a ping before closing").argParser(durationFlag).default(d.DEFAULT_KEEPALIVE_TIMEOUT_MS, formatGoDuration(d.DEFAULT_KEEPALIVE_TIMEOUT_MS))),
).action(async (opts: Record<string, unknown>, cmd: Command) => {
  let logger: Logger;
  try {
    logger = new Logger(d.DISCOVERY_LOG_SCOPES, loggingOptionsFrom(opts, d.DISCOVERY_LOG_SCOPES));
  } catch (e) {
    cmd.error(`error: ${(e as Error).message}`);
  }
  const log = logger.scope("default");
  if (!opts.configDir) cmd.error("error: --configDir: expected the directory of the mesh's configuration (no orchestrator API is reachable here)");
  let server;
  try {
    server = await startDiscovery({
      configDir: opts.configDir as string,
      grpc: parseListenAddress(opts.grpcAddr as string),
      http: parseListenAddress(opts.httpAddr as string),
      rootNamespace: DEFAULT_ROOT_NAMESPACE,
      debounceAfterMs: durationFromEnv("DISCO_DEBOUNCE_AFTER", d.DEFAULT_DEBOUNCE_AFTER_MS),
      debounceMaxMs: durationFromEnv("DISCO_DEBOUNCE_MAX", d.DEFAULT_DEBOUNCE_MAX_MS),
      keepaliveIntervalMs: opts.keepaliveInterval as number,
      keepaliveTimeoutMs: opts.keepaliveTimeout as number,
      checks: filterChecks(FilterModule.load()),
      log: logger.scope("ads"),
    });
  } catch (e) {
    log.error(`failed to start: ${(e as Error).message}`);
    logger.close();
    process.exit(1);
  }
  serveUntilSignal(d.LISTENING_LINE_PREFIX, server.listeners, () => server.close(), log, logger);
});

addLoggingFlags(addVersionCommand(program));

await program.parseAsync(process.argv);
