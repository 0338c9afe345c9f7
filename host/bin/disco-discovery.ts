// disco-discovery: the control plane, serving the mesh over xDS (spec 2, "disco-discovery"; docs/discovery.md).
//   disco-discovery discovery [flags]     serve ADS from --configDir
//   disco-discovery request <method> <path> [<body>]   call a running daemon's debug or monitoring port
//   disco-discovery version [-o json|yaml] [-s]
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { serveUntilSignal } from "../daemon/lifecycle.ts";
import { formatGoDuration } from "../daemon/duration.ts";
import { durationFlag, intFlag, parseBoolFlag } from "../daemon/flags.ts";
import { standardProgram, usageError } from "../daemon/program.ts";
import {
  DISCOVERY_NOT_APPLICABLE_ENV,
  DISCOVERY_NOT_APPLICABLE_FLAGS,
  type DiscoveryVariables,
  discoveryVariables,
} from "../daemon/spec_surface/disco_discovery.ts";
import { addNotApplicableFlags, refuseNotApplicableEnvironment } from "../daemon/spec_surface/not_applicable.ts";
import { addVersionCommand } from "../daemon/version.ts";
import { MODULE_PATH, moduleSource } from "../discovery/envoy_wasm.ts";
import { dialAddress, parseListenAddress } from "../discovery/listen_address.ts";
import { adminRequest } from "../proxy/admin_client.ts";
import { EXIT_FAILURE, EXIT_OK } from "../daemon/exit_codes.ts";
import * as d from "../discovery/options.ts";
import { type DiscoveryCommand, type DiscoveryFlags, DiscoveryFlagError, decodeDiscoveryCommand } from "../discovery/command_options.ts";
import { DEFAULT_CTRLZ_ADDRESS, DEFAULT_CTRLZ_PORT } from "../telemetry/ctrlz.ts";
import { Logger } from "../telemetry/logger.ts";
import { addLoggingFlags, loggingOptionsFrom } from "../telemetry/logging_flags.ts";

const PROGRAM = "disco-discovery discovery";
const program = standardProgram(new Command("disco-discovery").description("Mesh control plane: serves the mesh over xDS"));
// Spec 2's common flags (the logging flags and --ctrlz_*/--keepalive*) are upstream's persistent flags:
// given before the subcommand, they apply to it (`disco-discovery --log_output_level ads:debug discovery …`).
// Positional: a flag before the subcommand is the root's, one after it the subcommand's.
program.enablePositionalOptions();

function addressFlag(value: string): string {
  try {
    parseListenAddress(value);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message); // commander names the flag, one line, exit 2
  }
  return value;
}

function caAddressFlag(value: string): string {
  if (value !== "" && !/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$/.test(value))
    throw new InvalidArgumentError(`expected HOST:PORT, got ${JSON.stringify(value)}`);
  return value;
}

function registries(value: string): string[] {
  const list = value.split(",").map((r) => r.trim());
  for (const r of list) {
    if (r === "Orch")
      throw new InvalidArgumentError(
        "the Orch registry needs an orchestrator API, which is not reachable here: services come from --configDir (--registries Mock)",
      );
    if (r === "Catalog") throw new InvalidArgumentError("there is no catalog registry server: services come from --configDir (--registries Mock)");
    if (r !== "Mock") throw new InvalidArgumentError(`expected Mock (Orch and Catalog need servers not reachable here), got ${JSON.stringify(r)}`);
  }
  return list;
}

const discovery = addLoggingFlags(
  program
    .command("discovery")
    .description("Starts the discovery service")
    .option("--configDir <dir>", "directory watched for config files: the mesh's resources, ServiceEntries and orchestrator documents (the registry here)", "")
    .option("--grpcAddr <address>", "plain-text xDS address; empty disables; port 0 picks a free one", addressFlag, d.DEFAULT_GRPC_ADDR)
    .option(
      "--filterModule <path|url>",
      "where Envoy sidecars load the filter from: a path on the proxy, or an http(s) URL serving this build's filter.wasm (checked by its sha256)",
      MODULE_PATH,
    )
    .option(
      "--secureGrpcAddr <address>",
      "xDS over mutual TLS with disco-discovery's mesh_ca certificate (DISCO_CERT_DIR, default /etc/certs); empty disables; port 0 picks a free one",
      addressFlag,
      d.DEFAULT_SECURE_GRPC_ADDR,
    )
    .option(
      "--caAddress <HOST:PORT>",
      "mesh_ca's gRPC address: CreateCertificate on --secureGrpcAddr is relayed there (disco-discovery as a registration authority; mesh_ca needs --trusted-node-accounts naming disco-discovery for renewals); empty = no certificates here",
      caAddressFlag,
      "",
    )
    .option(
      "--httpsAddr <address>",
      "HTTPS address of the admission webhooks (/validate, /inject; AdmissionReview v1), served with the DISCO_CERT_DIR certificate; empty disables; port 0 picks a free one",
      addressFlag,
      d.DEFAULT_HTTPS_ADDR,
    )
    .option(
      "--httpAddr <address>",
      "debug HTTP address (/debug/syncz, /debug/proxy_config, /debug/adsz, /debug/configz, /debug/config_distribution, /debug/endpointz, /debug/resourcesz); empty disables",
      addressFlag,
      d.DEFAULT_HTTP_ADDR,
    )
    .option(
      "--monitoringAddr <address>",
      "self-monitoring HTTP address (/metrics, /ready, /version); empty disables; port 0 picks a free one",
      addressFlag,
      d.DEFAULT_MONITORING_ADDR,
    )
    .addOption(
      new Option("--profile [bool]", "serve V8 CPU profiles and heap snapshots at /debug/pprof/ on --httpAddr").argParser(parseBoolFlag).default(false),
    )
    .addOption(
      new Option("--registries <list>", "service registries: Mock (the --configDir documents); Orch and Catalog need servers not reachable here").argParser(
        registries,
      ),
    )
    .addOption(
      new Option("--keepaliveInterval <duration>", "ping when idle")
        .argParser(durationFlag)
        .default(d.DEFAULT_KEEPALIVE_INTERVAL_MS, formatGoDuration(d.DEFAULT_KEEPALIVE_INTERVAL_MS)),
    )
    .addOption(
      new Option("--keepaliveTimeout <duration>", "wait after a ping before closing")
        .argParser(durationFlag)
        .default(d.DEFAULT_KEEPALIVE_TIMEOUT_MS, formatGoDuration(d.DEFAULT_KEEPALIVE_TIMEOUT_MS)),
    )
    .addOption(
      new Option(
        "--keepaliveMaxServerConnectionAge <duration>",
        "close a connection gracefully after this long (proxies reconnect, e.g. to another replica); the default is never",
      )
        .argParser(durationFlag)
        .default(undefined, d.DEFAULT_MAX_CONNECTION_AGE),
    )
    .option(
      "--meshConfig <file>",
      "mesh config (upstream MeshConfig YAML): rootNamespace, trustDomain, extensionProviders, enableAutoMtls; also the injection webhook's mesh config; a missing file at the default path is the default mesh",
      d.DEFAULT_MESH_CONFIG,
    )
    .option(
      "--domain <suffix>",
      "DNS domain suffix of the mesh: service hosts, clusters and API listeners are <service>.<namespace>.svc.<suffix>, and short hosts of the mesh's resources resolve in it (not the SPIFFE trust domain: see --trust-domain)",
      d.DEFAULT_DOMAIN,
    )
    .option(
      "--trust-domain <domain>",
      "SPIFFE trust domain callers of --secureGrpcAddr must belong to (default: the mesh config's, else that of disco-discovery's certificate); also that of the identities Envoy's outbound mutual TLS checks (default there cluster.local)",
    )
    .option("--ctrlz_port <port>", "ControlZ introspection port; 0 picks a free one", intFlag(0, 65535), DEFAULT_CTRLZ_PORT)
    .option("--ctrlz_address <address>", "ControlZ address; * = every address", DEFAULT_CTRLZ_ADDRESS),
);
addNotApplicableFlags(discovery, DISCOVERY_NOT_APPLICABLE_FLAGS, PROGRAM);
discovery.action(async (given: DiscoveryFlags & Record<string, unknown>) => {
  const opts = withRootFlags(discovery, given);
  let logger: Logger;
  try {
    logger = new Logger(d.DISCOVERY_LOG_SCOPES, loggingOptionsFrom(opts, d.DISCOVERY_LOG_SCOPES));
  } catch (e) {
    usageError(PROGRAM, (e as Error).message);
  }
  refuseNotApplicableEnvironment(DISCOVERY_NOT_APPLICABLE_ENV, PROGRAM);
  let vars: DiscoveryVariables;
  try {
    vars = discoveryVariables(process.env);
  } catch (e) {
    usageError(PROGRAM, (e as Error).message);
  }
  let command: DiscoveryCommand;
  try {
    command = decodeDiscoveryCommand(opts, (flag) => discovery.getOptionValueSource(flag) === "cli", process.env, vars.revision);
  } catch (e) {
    if (!(e instanceof DiscoveryFlagError)) throw e;
    usageError(PROGRAM, e.message);
  }
  const log = logger.scope("default");
  for (const line of command.notes) log.info(line);
  for (const line of command.warnings) log.warn(line);
  // The control plane (gRPC, protobufjs, prom-client, the filter module) loads only now that the flags are good.
  const [{ startDiscovery }, { filterChecks }, { FilterModule, RELEASE_WASM }] = await Promise.all([
    import("../discovery/server.ts"),
    import("../config/catalog.ts"),
    import("../wasm/filter_module.ts"),
  ]);
  let server;
  try {
    server = await startDiscovery({
      configDir: command.configDir,
      grpc: command.grpc,
      ...(command.secureGrpc ? { secureGrpc: { ...command.secureGrpc, ...(command.caAddress ? { caAddress: command.caAddress } : {}) } } : {}),
      ...(command.https ? { https: { address: command.https.address, tls: command.https.tls.files, injection: command.injection } } : {}),
      webhookLog: logger.scope("validationServer"),
      scopes: {
        model: logger.scope("model"),
        validation: logger.scope("validation"),
        rbac: logger.scope("rbac"),
        authn: logger.scope("authn"),
        serverca: logger.scope("serverca"),
      },
      http: command.http,
      profiling: command.profiling,
      monitoring: command.monitoring,
      rootNamespace: command.mesh.rootNamespace,
      extensionProviders: command.mesh.extensionProviders,
      enableAutoMtls: command.mesh.enableAutoMtls,
      domain: command.domain,
      ...vars,
      ...(command.trustDomain ? { trustDomain: command.trustDomain } : {}),
      ...(command.maxConnectionAgeMs !== undefined ? { maxConnectionAgeMs: command.maxConnectionAgeMs } : {}),
      ctrlz: { ...command.ctrlz, logger },
      keepaliveIntervalMs: command.keepaliveIntervalMs,
      keepaliveTimeoutMs: command.keepaliveTimeoutMs,
      checks: filterChecks(FilterModule.load()),
      filterModule: moduleSource(command.filterModule, () => createHash("sha256").update(readFileSync(RELEASE_WASM)).digest("hex")),
      log: logger.scope("ads"),
    });
  } catch (e) {
    log.error(`failed to start: ${(e as Error).message}`);
    logger.close();
    process.exit(1);
  }
  serveUntilSignal(
    d.LISTENING_LINE_PREFIX,
    server.listeners,
    () => server.close(),
    log,
    logger,
    () => server.reload(),
  );
});

/**
 * Spec 2's flags common to the root and every subcommand (upstream's
 * persistent flags): `request` and `version` accept them, with no effect
 * there, so a command line that works upstream works here.
 */
function addPersistentFlags(cmd: Command): Command {
  const noEffect = "accepted on every subcommand, as upstream; no effect on this one";
  return cmd
    .addOption(new Option("--ctrlz_port <port>", noEffect).argParser(intFlag(0, 65535)))
    .addOption(new Option("--ctrlz_address <address>", noEffect))
    .addOption(new Option("--keepaliveInterval <duration>", noEffect).argParser(durationFlag))
    .addOption(new Option("--keepaliveTimeout <duration>", noEffect).argParser(durationFlag))
    .addOption(new Option("--keepaliveMaxServerConnectionAge <duration>", noEffect).argParser(durationFlag));
}

addLoggingFlags(
  program
    .command("request <method> <path> [body]")
    .description(
      "Makes an HTTP request to a running disco-discovery: /debug/* to its debug port, other paths (/metrics, /ready, /version) to its monitoring port",
    )
    .option("--httpAddr <address>", "the daemon's --httpAddr (debug pages)", addressFlag, d.DEFAULT_HTTP_ADDR)
    .option("--monitoringAddr <address>", "the daemon's --monitoringAddr (/metrics, /ready, /version)", addressFlag, d.DEFAULT_MONITORING_ADDR),
);
addPersistentFlags(program.commands.find((c) => c.name() === "request")!).action(
  async (method: string, path: string, body: string | undefined, opts: { httpAddr: string; monitoringAddr: string }) => {
    const flag = path.replace(/^\/?/, "/").startsWith("/debug/") ? "--httpAddr" : "--monitoringAddr";
    const address = parseListenAddress(flag === "--httpAddr" ? opts.httpAddr : opts.monitoringAddr);
    if (!address) usageError("disco-discovery request", `${flag}: expected the address of the daemon's listener for ${path}, got an empty value`);
    const target = dialAddress(address);
    try {
      const res = await adminRequest(target.port, method, path, body, target.host);
      process.stdout.write(res.body);
      process.exitCode = res.status < 400 ? EXIT_OK : EXIT_FAILURE;
    } catch (e) {
      process.stderr.write(`error: ${flag} ${target.host}:${target.port}: ${(e as Error).message}\n`);
      process.exitCode = EXIT_FAILURE;
    }
  },
);

addLoggingFlags(addVersionCommand(program));
addPersistentFlags(program.commands.find((c) => c.name() === "version")!);
addLoggingFlags(addPersistentFlags(program));

/**
 * The subcommand's options with the common flags given before it (on the
 * root) filled in; a flag given after the subcommand wins.
 */
function withRootFlags<T extends Record<string, unknown>>(cmd: Command, opts: T): T {
  const merged: Record<string, unknown> = { ...opts };
  for (const [key, value] of Object.entries(program.opts())) {
    if (program.getOptionValueSource(key) === "cli" && cmd.getOptionValueSource(key) !== "cli") {
      merged[key] = value;
      cmd.setOptionValueWithSource(key, value, "cli");
    }
  }
  return merged as T;
}

/**
 * `--log_as_json discovery`: a bool flag takes an optional value, and
 * commander would read the subcommand as it; pflag never does, so here
 * neither (`--log_as_json=false` still gives a value).
 */
function boolFlagsBeforeSubcommand(argv: string[]): string[] {
  const subcommands = new Set(program.commands.map((c) => c.name()));
  const bools = new Set(program.options.filter((o) => o.optional && o.long).map((o) => o.long!));
  return argv.map((arg, i) => (i >= 2 && bools.has(arg) && subcommands.has(argv[i + 1] ?? "") ? `${arg}=true` : arg));
}

await program.parseAsync(boolFlagsBeforeSubcommand(process.argv));
