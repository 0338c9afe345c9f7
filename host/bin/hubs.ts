// hubs: the policy and telemetry hub server (spec 2, "hubs"; docs/hubs.md).
//   hubs server [flags]                          serve mesh.hub.v1.Hub over gRPC
//   hubs probe --probe-path P --interval D       exit 0 while P was touched within D
//   hubs version [-o json|yaml] [-s]
import { Command, Option } from "commander";
import { formatGoDuration } from "../daemon/duration.ts";
import { EXIT_FAILURE } from "../daemon/exit_codes.ts";
import { durationFlag, intFlag, parseBoolFlag, rateFlag } from "../daemon/flags.ts";
import { serveUntilSignal } from "../daemon/lifecycle.ts";
import { standardProgram, usageError } from "../daemon/program.ts";
import { addNotApplicableFlags, refuseNotApplicableEnvironment } from "../daemon/spec_surface/not_applicable.ts";
import { HUB_NOT_APPLICABLE_ENV, HUB_NOT_APPLICABLE_FLAGS } from "../daemon/spec_surface/hubs.ts";
import { envReader } from "../daemon/env_values.ts";
import { fsStoreDir } from "../hubs/config_store.ts";
import { addVersionCommand } from "../daemon/version.ts";
import { DEFAULT_CTRLZ_ADDRESS, DEFAULT_CTRLZ_PORT } from "../telemetry/ctrlz.ts";
import { Logger } from "../telemetry/logger.ts";
import { addLoggingFlags, loggingOptionsFrom } from "../telemetry/logging_flags.ts";
import * as d from "../hubs/options.ts";
import { checkProbeFile } from "../daemon/probes.ts";
import { DEFAULT_LOAD_SHEDDING, LOAD_SHEDDING_MODES, type LoadSheddingMode } from "../hubs/load_shedder.ts";
import {
  DEFAULT_QUOTA_STORE_FAILURE_MODE,
  DEFAULT_QUOTA_STORE_TIMEOUT_MS,
  QUOTA_STORE_FAILURE_MODES,
  type QuotaStoreFailureMode,
} from "../hubs/quota_failure.ts";
import { parseQuotaStoreURL, type QuotaStoreLocation } from "../hubs/quota_store_url.ts";
import { chooseHubTls, DEFAULT_CA_CERT_FILE, DEFAULT_CERT_FILE, DEFAULT_KEY_FILE } from "../hubs/mutual_tls.ts";

const UINT16 = intFlag(0, 65535);
const UINT32 = intFlag(0, 2 ** 32 - 1);
const INT32 = intFlag(0, 2 ** 31 - 1);

/** `hubs server`'s flags as commander's parsers leave them (each checked by its parser), read typed below. */
interface HubServerFlags {
  address: string;
  averageLatencyThreshold: number;
  burstSize: number;
  caCertFile: string;
  certFile: string;
  configDefaultNamespace?: string;
  configStoreURL: string;
  configWaitTimeout: number;
  ctrlz_address: string;
  ctrlz_port: number;
  keyFile: string;
  latencyEnforcementThreshold: number;
  latencySampleHalflife: number;
  latencySamplesPerSecond: number;
  livenessProbeInterval: number;
  livenessProbePath: string;
  loadsheddingMode: LoadSheddingMode;
  maxConcurrentStreams: number;
  maxMessageSize: number;
  maxRequestsPerSecond: number;
  monitoringPort: number;
  port: number;
  profile: boolean;
  quotaStoreFailureMode: QuotaStoreFailureMode;
  quotaStoreTimeout: number;
  quotaStoreURL: string;
  readinessProbeInterval: number;
  readinessProbePath: string;
  requestMetricsMaxSeries: number;
}

const program = standardProgram(new Command("hubs").description("Mesh policy and telemetry hub"));

const serverCommand = addLoggingFlags(
  program
    .command("server")
    .description("Starts the hub as a server")
    .option("-p, --port <port>", "gRPC TCP port when --address is unset", UINT16, d.DEFAULT_GRPC_PORT)
    .option("--address <address>", "gRPC API address: tcp://HOST:PORT or unix://PATH; overrides --port", "")
    .option("--caCertFile <file>", "root CA cert: client certificates must chain to it (mutual TLS)", DEFAULT_CA_CERT_FILE)
    .option("--certFile <file>", "mutual TLS cert (the hub's certificate chain)", DEFAULT_CERT_FILE)
    .option("--keyFile <file>", "mutual TLS key", DEFAULT_KEY_FILE)
    .option("--monitoringPort <port>", "self-monitoring HTTP port (/metrics, /version, /healthz)", UINT16, d.DEFAULT_MONITORING_PORT)
    .option("--maxMessageSize <bytes>", "max gRPC message size; larger messages get RESOURCE_EXHAUSTED", UINT32, d.DEFAULT_MAX_MESSAGE_SIZE_BYTES)
    .option("--maxConcurrentStreams <n>", "outstanding RPCs per connection", UINT32, d.DEFAULT_MAX_CONCURRENT_STREAMS)
    .addOption(
      new Option("--loadsheddingMode <mode>", "load shedding: disabled (thresholds inert), logonly (log and count, serve), enforce (drop with UNAVAILABLE)")
        .choices(LOAD_SHEDDING_MODES)
        .default("disabled"),
    )
    .option("--maxRequestsPerSecond <rate>", "requests per second above which requests are dropped (UNAVAILABLE); 0 = off", rateFlag, 0)
    .option("--burstSize <n>", "requests permitted beyond the max for a period; only with --maxRequestsPerSecond", INT32, 0)
    .addOption(
      new Option("--averageLatencyThreshold <duration>", "average call duration above which calls are dropped; 0s = off")
        .argParser(durationFlag)
        .default(0, "0s"),
    )
    .option(
      "--latencyEnforcementThreshold <rate>",
      "calls per second above which --averageLatencyThreshold is enforced",
      rateFlag,
      DEFAULT_LOAD_SHEDDING.latencyEnforcementThreshold,
    )
    .addOption(
      new Option("--latencySampleHalflife <duration>", "half-life of a latency sample in the average")
        .argParser(durationFlag)
        .default(DEFAULT_LOAD_SHEDDING.latencySampleHalflifeMs, "1s"),
    )
    .addOption(
      new Option("--latencySamplesPerSecond <rate>", "latency samples taken per second at most (the default: every call)")
        .argParser(rateFlag)
        .default(Number.MAX_VALUE, "1.7976931348623157e+308"),
    )
    .option(
      "--configStoreURL <url>",
      "fs://DIR: rules, quotas and access logs (watched; SIGHUP rereads it); orch:// and mcps:// need an orchestrator API / MCP",
      "",
    )
    .option("--configDefaultNamespace <namespace>", "namespace of mesh-wide config and of documents without one (default: POD_NAMESPACE, else mesh-system)")
    .addOption(
      new Option("--configWaitTimeout <duration>", "wait for the initial config before serving")
        .argParser(durationFlag)
        .default(d.DEFAULT_CONFIG_WAIT_TIMEOUT_MS, formatGoDuration(d.DEFAULT_CONFIG_WAIT_TIMEOUT_MS)),
    )
    .addOption(new Option("--livenessProbeInterval <duration>", "liveness file update interval").argParser(durationFlag).default(0, "0s"))
    .option("--livenessProbePath <path>", "liveness file", "")
    .addOption(new Option("--readinessProbeInterval <duration>", "readiness file update interval").argParser(durationFlag).default(0, "0s"))
    .option("--readinessProbePath <path>", "readiness file", "")
    .addOption(
      new Option("--profile [bool]", "serve V8 CPU profiles and heap snapshots at /debug/pprof/ on --monitoringPort").argParser(parseBoolFlag).default(false),
    )
    .option("--ctrlz_port <port>", "ControlZ introspection port", UINT16, DEFAULT_CTRLZ_PORT)
    .option("--ctrlz_address <address>", "ControlZ address; * = every address", DEFAULT_CTRLZ_ADDRESS)
    .option(
      "--quotaStoreURL <url>",
      "where quota counters live: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or rediss:// (shared by every replica); empty = this process's memory",
      "",
    )
    .addOption(
      new Option("--quotaStoreTimeout <duration>", "longest wait for one allocation in the shared quota store; then --quotaStoreFailureMode answers")
        .argParser(durationFlag)
        .default(DEFAULT_QUOTA_STORE_TIMEOUT_MS, formatGoDuration(DEFAULT_QUOTA_STORE_TIMEOUT_MS)),
    )
    .addOption(
      new Option(
        "--quotaStoreFailureMode <mode>",
        "answer of an allocation the shared quota store cannot give: allow (grant what was asked, counted) or deny (grant nothing)",
      )
        .choices(QUOTA_STORE_FAILURE_MODES)
        .default(DEFAULT_QUOTA_STORE_FAILURE_MODE),
    )
    .option(
      "--requestMetricsMaxSeries <n>",
      "label sets per request metric (mesh_requests_total …); reports beyond them are counted in hub_request_metrics_overflow_total",
      INT32,
      d.DEFAULT_REQUEST_METRICS_MAX_SERIES,
    ),
);
addNotApplicableFlags(serverCommand, HUB_NOT_APPLICABLE_FLAGS, "hubs server");
serverCommand.action(async (opts: HubServerFlags & Record<string, unknown>) => {
  refuseNotApplicableEnvironment(HUB_NOT_APPLICABLE_ENV, "hubs server");
  let logger: Logger;
  try {
    logger = new Logger(d.HUB_LOG_SCOPES, loggingOptionsFrom(opts, d.HUB_LOG_SCOPES));
  } catch (e) {
    usageError("hubs server", (e as Error).message);
  }
  const storeURL = opts.configStoreURL;
  if (storeURL && fsStoreDir(storeURL) === undefined) {
    usageError(
      "hubs server",
      `--configStoreURL ${JSON.stringify(storeURL)}: this hub supports fs://DIR only (orch:// needs an orchestrator API, mcps:// an MCP server)`,
    );
  }
  let quotaStore: QuotaStoreLocation;
  try {
    quotaStore = parseQuotaStoreURL(opts.quotaStoreURL);
  } catch (e) {
    usageError("hubs server", (e as Error).message);
  }
  if (opts.quotaStoreTimeout <= 0) usageError("hubs server", "--quotaStoreTimeout: expected a positive duration such as 500ms");
  // Flags that only shape an evaluator another flag turns on: given alone they would change nothing.
  const given = (key: string) => serverCommand.getOptionValueSource(key) === "cli";
  for (const key of ["latencyEnforcementThreshold", "latencySampleHalflife", "latencySamplesPerSecond"]) {
    if (given(key) && opts.averageLatencyThreshold === 0)
      usageError("hubs server", `--${key}: no effect without --averageLatencyThreshold (it shapes the latency evaluator that flag turns on)`);
  }
  if (given("burstSize") && opts.maxRequestsPerSecond === 0)
    usageError("hubs server", "--burstSize: no effect without --maxRequestsPerSecond (it is that rate limit's burst allowance)");
  const log = logger.scope("default");
  process.on("uncaughtException", (e) => {
    log.fatal(`uncaught exception: ${e.stack ?? e.message}`);
    process.exit(1);
  });
  const explicitTls = ["caCertFile", "certFile", "keyFile"].some((k) => serverCommand.getOptionValueSource(k) !== "default");
  let bypassSanVerification = false;
  try {
    bypassSanVerification = envReader(process.env).bool("BYPASS_OOP_MTLS_SAN_VERIFICATION", false);
  } catch (e) {
    usageError("hubs server", (e as Error).message);
  }
  // The server (gRPC, protobufjs, prom-client, the filter module) loads only now that the flags are good.
  const { LISTENING_LINE_PREFIX, startHubServer } = await import("../hubs/server.ts");
  let server;
  try {
    server = await startHubServer(
      {
        tls: chooseHubTls({ caCertFile: opts.caCertFile, certFile: opts.certFile, keyFile: opts.keyFile }, explicitTls),
        bypassSanVerification,
        port: opts.port,
        address: opts.address,
        monitoringPort: opts.monitoringPort,
        maxMessageSize: opts.maxMessageSize,
        maxConcurrentStreams: opts.maxConcurrentStreams,
        apiWorkerPoolSize: d.DEFAULT_API_WORKER_POOL_SIZE,
        numCheckCacheEntries: d.DEFAULT_NUM_CHECK_CACHE_ENTRIES,
        loadShedding: {
          mode: opts.loadsheddingMode,
          maxRequestsPerSecond: opts.maxRequestsPerSecond,
          burstSize: opts.burstSize,
          averageLatencyThresholdMs: opts.averageLatencyThreshold,
          latencyEnforcementThreshold: opts.latencyEnforcementThreshold,
          latencySampleHalflifeMs: opts.latencySampleHalflife,
          latencySamplesPerSecond: opts.latencySamplesPerSecond,
        },
        configStoreURL: opts.configStoreURL,
        configDefaultNamespace: opts.configDefaultNamespace ?? (process.env.POD_NAMESPACE || d.DEFAULT_CONFIG_NAMESPACE),
        configWaitTimeoutMs: opts.configWaitTimeout,
        livenessProbePath: opts.livenessProbePath,
        livenessProbeIntervalMs: opts.livenessProbeInterval,
        readinessProbePath: opts.readinessProbePath,
        readinessProbeIntervalMs: opts.readinessProbeInterval,
        singleThreaded: false,
        profile: opts.profile,
        ctrlzPort: opts.ctrlz_port,
        ctrlzAddress: opts.ctrlz_address,
        quotaStore,
        quotaStoreTimeoutMs: opts.quotaStoreTimeout,
        quotaStoreFailureMode: opts.quotaStoreFailureMode,
        requestMetricsMaxSeries: opts.requestMetricsMaxSeries,
      },
      { logger },
    );
  } catch (e) {
    log.error(`failed to start: ${(e as Error).message}`);
    logger.close();
    process.exit(EXIT_FAILURE);
  }
  serveUntilSignal(
    LISTENING_LINE_PREFIX,
    server.listeners,
    () => server.close(),
    log,
    logger,
    () => server.reload(),
  );
});

addLoggingFlags(
  program
    .command("probe")
    .description("Checks the liveness or readiness of a locally-running server")
    .option("--probe-path <path>", "path of the file to check", "")
    .addOption(new Option("--interval <duration>", "the file must have been updated within this duration").argParser(durationFlag).default(0, "0s")),
).action((opts: { probePath: string; interval: number }) => {
  const problem = checkProbeFile(opts.probePath, opts.interval);
  if (problem !== undefined) {
    process.stderr.write(`probe failed: ${problem}\n`);
    process.exit(EXIT_FAILURE);
  }
});

addLoggingFlags(addVersionCommand(program));

await program.parseAsync(process.argv);
