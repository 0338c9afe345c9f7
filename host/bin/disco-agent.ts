// disco-agent: the mesh's sidecar agent (spec 2, "disco-agent"; docs/sidecar.md).
//   disco-agent proxy [flags]                       run the sidecar
//   disco-agent request <method> <path> [<body>]    call the admin API of a running sidecar
//   disco-agent version [-o json|yaml] [-s]
import { Command, Option } from "commander";
import { formatGoDuration } from "../cli/duration.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE } from "../cli/exit_codes.ts";
import { durationFlag, intFlag } from "../cli/flags.ts";
import { addVersionCommand } from "../cli/version.ts";
import { Logger } from "../telemetry/logger.ts";
import { addLoggingFlags, loggingOptionsFrom } from "../telemetry/logging_flags.ts";
import { runProxyCommand, SIDECAR_LOG_SCOPES } from "../proxy/agent_command.ts";
import { DEFAULT_ADMIN_PORT, DEFAULT_INBOUND_PORT, DEFAULT_OUTBOUND_PORT } from "../proxy/sidecar.ts";
import { adminRequest } from "../proxy/admin_client.ts";

const UINT16 = intFlag(0, 65535);
const collect = (value: string, previous: string[]) => [...previous, value];

const program = new Command("disco-agent").description("Mesh sidecar agent").showHelpAfterError();

addLoggingFlags(
  program
    .command("proxy")
    .description("Runs the sidecar: inbound and outbound listeners with the policy filter, and the admin port")
    .option("--proxyAdminPort <port>", "admin listener port", UINT16, DEFAULT_ADMIN_PORT)
    .option("--statusPort <port>", "agent status HTTP port (/healthz/ready); 0 = not served", UINT16, 0)
    .option("--inboundPort <port>", "listener in front of the local app", UINT16, DEFAULT_INBOUND_PORT)
    .option("--outboundPort <port>", "listener for the app's outgoing calls", UINT16, DEFAULT_OUTBOUND_PORT)
    .option("--appPort <port>", "port of the local app the inbound listener forwards to", UINT16, 8080)
    .option("--appHost <host>", "host of the local app", "127.0.0.1")
    .option("--tcpPort <port>", "TCP listener in front of the app's TCP port, filtered by TcpClientConfig (off unless given)", UINT16)
    .option("--tcpAppPort <port>", "the app's TCP port (default: --appPort)", UINT16)
    .option("--bindAddress <address>", "address the listeners bind to", "127.0.0.1")
    .option("--configDir <dir>", "directory of resource YAML/JSON (watched; a bad file keeps the last good configuration)")
    .option("--cluster <NAME=HOST:PORT>", "a named upstream, repeatable (hub_server for the hub; service FQDNs for outbound calls)", collect, [])
    .option("--inboundService <fqdn>", "service the inbound listener fronts (selects its ServiceConfig)", "")
    .option("--concurrency <n>", "worker threads (accepted; Node serves all connections on one event loop)", intFlag(0, 1024), 0)
    .addOption(new Option("--drainDuration <duration>", "time to let requests in flight finish on shutdown").argParser(durationFlag).default(45_000, formatGoDuration(45_000)))
    .addOption(new Option("--parentShutdownDuration <duration>", "hard limit of a shutdown").argParser(durationFlag).default(60_000, formatGoDuration(60_000)))
    .option("--id <id>", "proxy ID; empty uses ${POD_NAME}.${POD_NAMESPACE}", "")
    .option("--ip <ip>", "proxy IP; empty uses ${INSTANCE_IP}", "")
    .option("--domain <suffix>", "DNS suffix; empty uses ${POD_NAMESPACE}.svc.cluster.local", "")
    .option("--serviceCluster <name>", "service cluster", "mesh-proxy")
    .addOption(new Option("--proxyLogLevel <level>", "filter log level").choices(["trace", "debug", "info", "warning", "error", "critical", "off"]).default("warning"))
    .option("--wasm <path>", "the filter module (default: build/filter.wasm)")
    // The security path (docs/sidecar.md "Security"): on with --caAddress.
    .option("--caAddress <HOST:PORT>", "mesh_ca gRPC address: turns on mutual TLS, JWT, authorization and routing with workload certificates")
    .addOption(new Option("--controlPlaneAuthPolicy <policy>", "how mesh_ca and the hub are reached: MUTUAL_TLS (TLS; the workload certificate for the hub and for renewals) or NONE (plain text, local development)").choices(["NONE", "MUTUAL_TLS"]).default("NONE"))
    .option("--tokenPath <file>", "service-account token presented to mesh_ca (mint one with mesh_ca token); default per JWT_POLICY: ./var/run/secrets/tokens/mesh-token")
    .option("--caRootCert <file>", "roots that sign mesh_ca's TLS certificate (MUTUAL_TLS)", "/etc/certs/root-cert.pem")
    .option("--hubIdentity <suffix>", "suffix the hub's SPIFFE identity must end with (MUTUAL_TLS); empty = any identity of the trust domain", "")
    .option("--trustDomain <domain>", "trust domain of the workload identity (default: the mesh config's, cluster.local)")
    .option("--serviceAccount <name>", "service account of the workload identity spiffe://<td>/ns/<POD_NAMESPACE>/sa/<sa>", "default")
    .option("--labels <k=v,...>", "workload labels (policy selectors, Gateway selector); default ${POD_LABELS}, else the Pod document's")
    .option("--meshConfigFile <file>", "mesh settings YAML: rootNamespace, trustDomain, enableAutoMtls, outboundTrafficPolicy, enableFallthroughRoute, pathNormalization")
    .option("--endpoint <FQDN:SERVICE_PORT=HOST:PORT[,sidecar][,sa=NAME]>", "a service endpoint for outbound and gateway routing, repeatable; sidecar = the address is a sidecar's inbound listener (auto mTLS)", collect, [])
    .option("--containerPort <port>", "container port the inbound listener stands for (PeerAuthentication portLevelMtls, authorization ports; gateway: the Gateway server port); default --appPort", intFlag(1, 65535))
    .option("--gateway", "run as an ingress gateway: the inbound listener routes by Host to VirtualService destinations", false)
    .option("--jwtClockSkewSeconds <n>", "allowance on JWT exp/nbf in seconds (upstream uses 60)", intFlag(0, 86_400), 0)
    .addOption(new Option("--workloadCertTtl <duration>", "requested workload certificate lifetime; 0 = the CA's default").argParser(durationFlag).default(0, "0s"))
    .addOption(new Option("--workloadKeyAlgorithm <alg>", "workload key type").choices(["RSA", "ECDSA"]).default("RSA")),
).action(async (opts: Record<string, unknown>, cmd: Command) => {
  let logger: Logger;
  try {
    logger = new Logger(SIDECAR_LOG_SCOPES, loggingOptionsFrom(opts, SIDECAR_LOG_SCOPES));
  } catch (e) {
    cmd.error(`error: ${(e as Error).message}`);
  }
  process.exitCode = await runProxyCommand(opts, logger, process.env);
});

program
  .command("request <method> <path> [body]")
  .description("Makes an HTTP request to the admin API of a running sidecar")
  .option("--proxyAdminPort <port>", "admin port", UINT16, DEFAULT_ADMIN_PORT)
  .action(async (method: string, path: string, body: string | undefined, opts: { proxyAdminPort: number }) => {
    try {
      const res = await adminRequest(opts.proxyAdminPort, method, path, body);
      process.stdout.write(res.body);
      process.exitCode = res.status < 400 ? 0 : EXIT_FAILURE;
    } catch (e) {
      process.stderr.write(`error: admin port ${opts.proxyAdminPort}: ${(e as Error).message}\n`);
      process.exitCode = EXIT_FAILURE;
    }
  });

addVersionCommand(program);

program.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT_BAD_CONFIG));
await program.parseAsync(process.argv);
