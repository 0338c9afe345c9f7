// disco-agent: the mesh's sidecar agent (spec 2, "disco-agent"; docs/sidecar.md).
//   disco-agent proxy [sidecar|router] [flags]      run the sidecar
//   disco-agent request <method> <path> [<body>]    call the admin API of a running sidecar
//   disco-agent mesh-iptables [flags]               install the pod's traffic capture rules (upstream's istio-iptables)
//   disco-agent version [-o json|yaml] [-s]
import { Command, Option } from "commander";
import { formatGoDuration } from "../daemon/duration.ts";
import { EXIT_FAILURE } from "../daemon/exit_codes.ts";
import { durationFlag, intFlag, parseBoolFlag } from "../daemon/flags.ts";
import { standardProgram, usageError } from "../daemon/program.ts";
import { addVersionCommand, buildInfo } from "../daemon/version.ts";
import { decodeAppProbers } from "../inject/app_probes.ts";
import { statusPortsFromEnv } from "../proxy/status_ports.ts";
import { nodeMetadata } from "../proxy/node_metadata.ts";
import { addNotApplicableFlags, na, refuseNotApplicableEnvironment } from "../daemon/spec_surface/not_applicable.ts";
import {
  AGENT_NOT_APPLICABLE_ENV,
  AGENT_NOT_APPLICABLE_FLAGS,
  PROXY_LOG_LEVELS,
  type ProxyLogLevel,
  agentVariables,
  loggerLevelOf,
  parseProxyComponentLevels,
} from "../daemon/spec_surface/disco_agent.ts";
import { Logger } from "../telemetry/logger.ts";
import { addLoggingFlags, loggingOptionsFrom } from "../telemetry/logging_flags.ts";
import { DEFAULT_ADMIN_PORT, DEFAULT_INBOUND_PORT, DEFAULT_OUTBOUND_PORT, DEFAULT_TOKEN_MANAGER_PLUGIN, SIDECAR_LOG_SCOPES } from "../proxy/defaults.ts";
import { adminRequest } from "../proxy/admin_client.ts";
import { DEFAULT_LISTENER_LIMITS } from "../proxy/listener_limits.ts";
import type { AgentOptions } from "../proxy/agent_options.ts";
import { DEFAULT_JWKS_COOLDOWN_MS } from "../security/jwt/jwks_defaults.ts";
import { CAPTURE_FLAGS, CaptureFlagError, type RawCaptureFlags, decodeCaptureOptions } from "../capture/capture_options.ts";

const UINT16 = intFlag(0, 65535);
const collect = (value: string, previous: string[]) => [...previous, value];

const program = standardProgram(new Command("disco-agent").description("Mesh sidecar agent"));

const proxy = addLoggingFlags(
  program
    .command("proxy")
    .description("Runs the sidecar: inbound and outbound listeners with the policy filter, and the admin port")
    .argument("[type]", "sidecar (default), or router: an ingress gateway (as --gateway); upstream's `proxy sidecar|router`")
    .option("--proxyAdminPort <port>", "admin listener port", UINT16, DEFAULT_ADMIN_PORT)
    .option("--statusPort <port>", "agent status HTTP port (/healthz/ready); 0 = not served", UINT16, 0)
    .option("--inboundPort <port>", "listener in front of the local app", UINT16, DEFAULT_INBOUND_PORT)
    .option("--outboundPort <port>", "listener for the app's outgoing calls", UINT16, DEFAULT_OUTBOUND_PORT)
    .option("--appPort <port>", "port of the local app the inbound listener forwards to", UINT16, 8080)
    .option("--appHost <host>", "host of the local app", "127.0.0.1")
    .option("--tcpPort <port>", "TCP listener in front of the app's TCP port, filtered by TcpClientConfig (off unless given)", UINT16)
    .option("--tcpAppPort <port>", "the app's TCP port (default: --appPort)", UINT16)
    .option(
      "--bindAddress <address>",
      "address the inbound, tcp and status listeners bind to (the pod's address); the outbound listener is on loopback",
      "127.0.0.1",
    )
    .option("--adminBindAddress <address>", "address the admin listener binds to; default loopback (a warning when it is not)")
    .option(
      "--configDir <dir>",
      "directory of resource YAML/JSON (watched; a bad file keeps the last good configuration); standalone use, without --discoveryAddress",
    )
    .option("--discoveryAddress <HOST:PORT>", "disco-discovery's xDS address: the configuration comes over ADS (every change pushed) instead of --configDir")
    .option(
      "--cluster <NAME=HOST:PORT[,HOST:PORT…]>",
      "a named upstream, repeatable (hub_server for the hub, several addresses = replicas taken round robin; service FQDNs for outbound calls)",
      collect,
      [],
    )
    .option("--inboundService <fqdn>", "service the inbound listener fronts (selects its ServiceConfig)", "")
    .addOption(
      new Option("--drainDuration <duration>", "time to let requests in flight finish on shutdown")
        .argParser(durationFlag)
        .default(45_000, formatGoDuration(45_000)),
    )
    .addOption(new Option("--parentShutdownDuration <duration>", "hard limit of a shutdown").argParser(durationFlag).default(60_000, formatGoDuration(60_000)))
    .option("--id <id>", "proxy ID; empty uses ${POD_NAME}.${POD_NAMESPACE}", "")
    .option("--ip <ip>", "proxy IP; empty uses ${INSTANCE_IP}", "")
    .option("--domain <suffix>", "DNS suffix; empty uses ${POD_NAMESPACE}.svc.cluster.local", "")
    .option("--serviceCluster <name>", "service cluster", "mesh-proxy")
    .addOption(
      new Option("--proxyLogLevel <level>", "log level of the data path (the `filter` scope) unless --log_output_level names it")
        .choices(PROXY_LOG_LEVELS)
        .default("warning"),
    )
    .option(
      "--proxyComponentLogLevel <levels>",
      "comma list <component>:<level> of Envoy logger names, applied to the scope each maps to (as `meshctl proxy-config log`: wasm, jwt, rbac → filter; grpc → hub; file, init, secret → config; others → default); the default leaves levels alone",
      "misc:error",
    )
    .addOption(
      new Option("--connectTimeout <duration>", "deadline of each request to supporting services (mesh_ca)").argParser(durationFlag).default(10_000, "10s"),
    )
    .option("--stsPort <port>", "token exchange service (OAuth 2.0 token exchange, RFC 8693) on 127.0.0.1:<port>/token; 0 = not served", UINT16, 0)
    .addOption(
      new Option("--tokenManagerPlugin <plugin>", "token manager of --stsPort for requests with a scope (a cloud access token)")
        .choices([DEFAULT_TOKEN_MANAGER_PLUGIN])
        .default(DEFAULT_TOKEN_MANAGER_PLUGIN),
    )
    .option("--metricsdUdpAddress <IP:port>", "send the sidecar's stats to a metrics daemon (statsd) over UDP every 5 s, as Envoy's statsd sink", "")
    .option(
      "--proxyAccessLogService <address>",
      'stream an access log entry per request to this Envoy access log service (envoy.service.accesslog.v3 StreamAccessLogs, plain-text gRPC): host:port or {"address":"host:port"}',
      "",
    )
    .option(
      "--proxyMetricsService <address>",
      'stream the sidecar\'s stats every 5 s to this Envoy metrics service (envoy.service.metrics.v3 StreamMetrics, plain-text gRPC): host:port or {"address":"host:port"}',
      "",
    )
    .option(
      "--outlierLogPath <path>",
      "append Envoy's outlier detection events (OutlierDetectionEvent JSON lines: every ejection and return of an endpoint) to this file; empty = none",
      "",
    )
    .option("--wasm <path>", "the filter module (default: build/filter.wasm)")
    // Listener limits (docs/sidecar.md "Listener limits"), per HTTP listener; 0 turns one off.
    .addOption(
      new Option(
        "--headerReadTimeout <duration>",
        "close a connection (408) whose request headers are not complete this long after it opened or its request began",
      )
        .argParser(durationFlag)
        .default(DEFAULT_LISTENER_LIMITS.headerReadTimeoutMs, formatGoDuration(DEFAULT_LISTENER_LIMITS.headerReadTimeoutMs)),
    )
    .addOption(
      new Option("--idleTimeout <duration>", "close a kept-alive connection with no request in flight after this long")
        .argParser(durationFlag)
        .default(DEFAULT_LISTENER_LIMITS.idleTimeoutMs, formatGoDuration(DEFAULT_LISTENER_LIMITS.idleTimeoutMs)),
    )
    .option(
      "--maxConnections <n>",
      "open connections per listener; at the limit a new one replaces the longest without a request in flight, else it is closed",
      intFlag(0, 1_000_000),
      DEFAULT_LISTENER_LIMITS.maxConnections,
    )
    .option(
      "--maxConcurrentRequests <n>",
      "requests in flight per listener; over it: 503",
      intFlag(0, 1_000_000),
      DEFAULT_LISTENER_LIMITS.maxConcurrentRequests,
    )
    // The security path (docs/sidecar.md "Security"): on with --caAddress.
    .option(
      "--caAddress <HOST:PORT>",
      "the CA's gRPC address (default: CA_ADDR, else --discoveryAddress: disco-discovery relays to mesh_ca); a CA turns on mutual TLS, JWT, authorization and routing with workload certificates",
    )
    .addOption(
      new Option(
        "--controlPlaneAuthPolicy <policy>",
        "how the CA, the hub and disco-discovery are reached: MUTUAL_TLS (TLS; the workload certificate for the hub and for renewals) or NONE (plain text, local development); MUTUAL_TLS when the CA is the control plane (--discoveryAddress without --caAddress)",
      )
        .choices(["NONE", "MUTUAL_TLS"])
        .default("NONE"),
    )
    .option(
      "--tokenPath <file>",
      "service-account token presented to mesh_ca (mint one with mesh_ca token); default per JWT_POLICY: ./var/run/secrets/tokens/mesh-token",
    )
    .option(
      "--caRootCert <file>",
      "roots that sign the CA's TLS certificate (MUTUAL_TLS); /var/run/secrets/mesh/root-cert.pem when the CA is the control plane",
      "/etc/certs/root-cert.pem",
    )
    .option("--hubIdentity <suffix>", "suffix the hub's SPIFFE identity must end with (MUTUAL_TLS); empty = any identity of the trust domain", "")
    .option(
      "--discoIdentity <suffix>",
      "suffix disco-discovery's SPIFFE identity must end with (MUTUAL_TLS with --discoveryAddress); empty = any identity of the trust domain",
      "",
    )
    .option("--trust-domain <domain>", "trust domain of the workload identity (default: TRUST_DOMAIN, else the mesh config's, cluster.local)")
    .addOption(new Option("--trustDomain <domain>", "deprecated spelling of --trust-domain").hideHelp())
    .option("--serviceAccount <name>", "service account of the workload identity spiffe://<td>/ns/<POD_NAMESPACE>/sa/<sa>", "default")
    .option("--labels <k=v,...>", "workload labels (policy selectors, Gateway selector); default ${POD_LABELS}, else the Pod document's")
    .option(
      "--meshConfigFile <file>",
      "mesh settings YAML: rootNamespace, trustDomain, enableAutoMtls, outboundTrafficPolicy, enableFallthroughRoute, pathNormalization",
    )
    .option(
      "--endpoint <FQDN:SERVICE_PORT=HOST:PORT[,sidecar][,sa=NAME]>",
      "a service endpoint for outbound and gateway routing, repeatable; sidecar = the address is a sidecar's inbound listener (auto mTLS)",
      collect,
      [],
    )
    .option(
      "--containerPort <port>",
      "container port the inbound listener stands for (PeerAuthentication portLevelMtls, authorization ports; gateway: the Gateway server port); default --appPort",
      intFlag(1, 65535),
    )
    .option("--gateway", "run as an ingress gateway: the inbound listener routes by Host to VirtualService destinations", false)
    .option("--jwtClockSkewSeconds <n>", "allowance on JWT exp/nbf in seconds (upstream uses 60)", intFlag(0, 86_400), 0)
    .addOption(
      new Option("--jwksRefetchCooldown <duration>", "a JWT whose kid is not in the fetched key set refetches it at most this often per jwksUri")
        .argParser(durationFlag)
        .default(DEFAULT_JWKS_COOLDOWN_MS, formatGoDuration(DEFAULT_JWKS_COOLDOWN_MS)),
    )
    .addOption(
      new Option("--workloadCertTtl <duration>", "requested workload certificate lifetime; 0 = the CA's default (default: SECRET_TTL, else 24h0m0s)").argParser(
        durationFlag,
      ),
    )
    .addOption(new Option("--workloadKeyAlgorithm <alg>", "workload key type").choices(["RSA", "ECDSA"]).default("RSA")),
);
addNotApplicableFlags(proxy, AGENT_NOT_APPLICABLE_FLAGS, "disco-agent proxy");
addNotApplicableFlags(proxy, [na("--concurrency", "value", "0", "the sidecar serves every connection on one event loop")], "disco-agent proxy");
// --trust-domain and its old spelling share the option value `trustDomain`.
let deprecatedTrustDomain = false;
proxy.on("option:trustDomain", () => (deprecatedTrustDomain = true));
// Commander's parsers have checked each flag; its values are the typed AgentOptions (plus the logging flags).
proxy.action(async (type: string | undefined, opts: AgentOptions & Record<string, unknown>) => {
  refuseNotApplicableEnvironment(AGENT_NOT_APPLICABLE_ENV, "disco-agent proxy");
  if (type !== undefined && type !== "sidecar" && type !== "router")
    usageError("disco-agent proxy", `type: expected sidecar or router, got ${JSON.stringify(type)}`);
  if (type === "router") opts.gateway = true;
  let vars;
  let logger: Logger;
  let appProbers;
  let statusPorts;
  try {
    vars = agentVariables(process.env);
    appProbers = decodeAppProbers(process.env.MESH_ORCH_APP_PROBERS);
    statusPorts = statusPortsFromEnv(process.env);
    // The spec's default (misc:error) names a logger folded into `default` here: only given values apply.
    const componentLevels = parseProxyComponentLevels(opts.proxyComponentLogLevel as string);
    if (proxy.getOptionValueSource("proxyComponentLogLevel") !== "cli") componentLevels.clear();
    logger = new Logger(SIDECAR_LOG_SCOPES, loggingOptionsFrom(opts, SIDECAR_LOG_SCOPES));
    // --proxyLogLevel and --proxyComponentLogLevel set the scopes --log_output_level leaves unnamed.
    const named = new Set(
      String(opts.log_output_level)
        .split(",")
        .map((i) => (i.includes(":") ? i.slice(0, i.lastIndexOf(":")) : "default").trim()),
    );
    if (!named.has("all")) {
      if (!named.has("filter")) logger.setLevel("filter", loggerLevelOf(opts.proxyLogLevel as ProxyLogLevel));
      for (const [scope, level] of componentLevels) if (!named.has(scope)) logger.setLevel(scope, loggerLevelOf(level));
    }
  } catch (e) {
    usageError("disco-agent proxy", (e as Error).message);
  }
  const requestedTtl = opts.workloadCertTtl ?? vars.secretTtlMs;
  if (vars.secretGraceMs !== undefined && requestedTtl > 0 && vars.secretGraceMs >= requestedTtl) {
    usageError(
      "disco-agent proxy",
      `SECRET_GRACE_DURATION=${formatGoDuration(vars.secretGraceMs)} is not shorter than the requested certificate lifetime ${formatGoDuration(requestedTtl)} (SECRET_TTL / --workloadCertTtl): every certificate would be renewed at once`,
    );
  }
  if (deprecatedTrustDomain) logger.scope("default").warn("--trustDomain is deprecated: use --trust-domain");
  const settings: AgentOptions = {
    ...opts,
    caAddress: opts.caAddress ?? vars.caAddress,
    // Their defaults depend on the CA (docs/sidecar.md "Joining through the control plane"): only given values are passed on.
    controlPlaneAuthPolicy: proxy.getOptionValueSource("controlPlaneAuthPolicy") === "cli" ? opts.controlPlaneAuthPolicy : undefined,
    caRootCert: proxy.getOptionValueSource("caRootCert") === "cli" ? opts.caRootCert : undefined,
    trustDomain: opts.trustDomain ?? vars.trustDomain,
    workloadCertTtl: opts.workloadCertTtl ?? vars.secretTtlMs,
    ...(vars.secretGraceMs !== undefined ? { secretGraceDuration: vars.secretGraceMs } : {}),
    initialBackoffMs: vars.initialBackoffMs,
    connectTimeout: opts.connectTimeout,
    ...(vars.terminationDrainMs !== undefined ? { terminationDrainMs: vars.terminationDrainMs } : {}),
    ...(appProbers.size > 0 ? { appProbers } : {}),
    ...(statusPorts.length > 0 ? { statusPorts } : {}),
    nodeMetadata: nodeMetadata(process.env, buildInfo().version),
  };
  const { PKCS8_KEY: _p, OUTPUT_KEY_CERT_TO_DIRECTORY: _o, ...rest } = process.env;
  const env = {
    ...rest,
    ...(vars.pkcs8Key ? { PKCS8_KEY: "true" } : {}),
    ...(vars.outputKeyCertDirectory ? { OUTPUT_KEY_CERT_TO_DIRECTORY: vars.outputKeyCertDirectory } : {}),
  };
  // The sidecar (gRPC, protobufjs, jose, the filter module) loads only now that the flags are good.
  const { runProxyCommand } = await import("../proxy/agent_command.ts");
  const code = await runProxyCommand(settings, logger, env);
  // Whatever a failed start left open (a watcher, a gRPC channel) must not keep the agent alive: an orchestrator restarts only what exits.
  logger.close();
  process.exit(code);
});

addLoggingFlags(
  program
    .command("request <method> <path> [body]")
    .description("Makes an HTTP request to the admin API of a running sidecar")
    .option("--proxyAdminPort <port>", "admin port", UINT16, DEFAULT_ADMIN_PORT),
).action(async (method: string, path: string, body: string | undefined, opts: { proxyAdminPort: number }) => {
  try {
    const res = await adminRequest(opts.proxyAdminPort, method, path, body);
    process.stdout.write(res.body);
    process.exitCode = res.status < 400 ? 0 : EXIT_FAILURE;
  } catch (e) {
    process.stderr.write(`error: admin port ${opts.proxyAdminPort}: ${(e as Error).message}\n`);
    process.exitCode = EXIT_FAILURE;
  }
});

const meshIptables = program
  .command("mesh-iptables")
  .description(
    "Installs the pod's traffic capture rules (upstream's istio-iptables): inbound TCP to the inbound listener, outbound TCP to the outbound listener, the proxy's own traffic excluded by its user id. Run it in the pod's network namespace, as root.",
  );
for (const f of Object.values(CAPTURE_FLAGS)) {
  const names = `${f.short ? `-${f.short}, ` : ""}--${f.long}`;
  const bool = f.long === "dry-run" || f.long === "cleanup-only";
  const option = new Option(bool ? `${names} [bool]` : `${names} <value>`, f.env ? `${f.help} (env ${f.env})` : f.help);
  meshIptables.addOption(bool ? option.argParser(parseBoolFlag) : option);
}
meshIptables.action(async (flags: RawCaptureFlags) => {
  const { runMeshIptables, uidFromPasswd } = await import("../capture/mesh_iptables.ts");
  let options;
  try {
    options = decodeCaptureOptions(flags, process.env, (user) => uidFromPasswd(user));
  } catch (e) {
    if (e instanceof CaptureFlagError) usageError("disco-agent mesh-iptables", e.message);
    throw e;
  }
  process.exitCode = runMeshIptables(options, process);
});

addLoggingFlags(addVersionCommand(program));

await program.parseAsync(process.argv);
