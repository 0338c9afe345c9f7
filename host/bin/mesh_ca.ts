// mesh_ca: the mesh certificate authority (spec 2, "mesh_ca"; docs/mesh_ca.md).
//   mesh_ca [flags]                                  run the CA: CSR signing over gRPC
//   mesh_ca probe --probe-path P --interval D        exit 0 while P was touched within D
//   mesh_ca token --issuer-dir DIR --namespace NS --service-account SA   mint a workload token
//   mesh_ca version [-o json|yaml] [-s]
import { Command, InvalidArgumentError, Option } from "commander";
import { formatGoDuration } from "../daemon/duration.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE } from "../daemon/exit_codes.ts";
import { durationFlag, intFlag, parseBoolFlag } from "../daemon/flags.ts";
import { serveUntilSignal } from "../daemon/lifecycle.ts";
import { standardProgram, usageError } from "../daemon/program.ts";
import { addNotApplicableFlags, refuseNotApplicableEnvironment } from "../daemon/spec_surface/not_applicable.ts";
import { ANCHOR_CTRLZ_ONLY_FLAGS, ANCHOR_NOT_APPLICABLE_ENV, ANCHOR_NOT_APPLICABLE_FLAGS } from "../daemon/spec_surface/mesh_ca.ts";
import { addVersionCommand } from "../daemon/version.ts";
import { DEFAULT_CTRLZ_ADDRESS, DEFAULT_CTRLZ_PORT } from "../telemetry/ctrlz.ts";
import { Logger } from "../telemetry/logger.ts";
import { addLoggingFlags, loggingOptionsFrom } from "../telemetry/logging_flags.ts";
import { checkProbeFile } from "../daemon/probes.ts";
import { anchorEnvironment } from "../anchor/environment.ts";
import { AnchorConfigError } from "../anchor/errors.ts";
import * as d from "../anchor/options.ts";

const UINT16 = intFlag(0, 65535);
const KEY_SIZE = intFlag(1024, 16384);

function ratioFlag(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError("expected a number from 0 to 1");
  return n;
}

const bool = (flags: string, help: string) => new Option(flags, help).argParser(parseBoolFlag).default(false);
const duration = (flags: string, help: string, ms: number) => new Option(flags, help).argParser(durationFlag).default(ms, formatGoDuration(ms));
const program = addLoggingFlags(
  standardProgram(new Command("mesh_ca"))
    // The root's flags go before a subcommand; after `probe`/`version` they are the subcommand's.
    .enablePositionalOptions()
    .description("Mesh certificate authority: issues workload certificates with SPIFFE identities over gRPC")
    .addOption(bool("--self-signed-ca [bool]", "use an auto-generated self-signed CA; --signing-cert and --signing-key are then ignored"))
    .option("--self-signed-ca-cert-dir <dir>", "keep the self-signed CA (ca-key.pem, ca-cert.pem, root-cert.pem) here across restarts; empty = memory only", "")
    .addOption(
      bool(
        "--read-signing-cert-only [bool]",
        "only read the self-signed CA from --self-signed-ca-cert-dir, never generate or rotate it; exactly one instance must have it off",
      ),
    )
    .option("--signing-cert <file>", "CA signing certificate file", "")
    .option("--signing-key <file>", "CA signing key file (PKCS#1, SEC1 or PKCS#8 PEM; RSA or EC P-256)", "")
    .option("--root-cert <file>", "root certificate file", "")
    .option("--cert-chain <file>", "certificate chain file: the signing certificate and intermediates", "")
    .option("--trust-domain <domain>", "SPIFFE trust domain; identities must be spiffe://<domain>/ns/<ns>/sa/<sa>", d.DEFAULT_TRUST_DOMAIN)
    .addOption(duration("--workload-cert-ttl <duration>", "TTL of issued workload certs (when a request asks for 0)", d.DEFAULT_WORKLOAD_CERT_TTL_MS))
    .addOption(duration("--max-workload-cert-ttl <duration>", "max TTL of workload certs; requests above it are refused", d.DEFAULT_MAX_WORKLOAD_CERT_TTL_MS))
    .option(
      "--workload-cert-grace-period-ratio <ratio>",
      "rotation grace period as a ratio of cert TTL, told to clients",
      ratioFlag,
      d.DEFAULT_GRACE_PERIOD_RATIO,
    )
    .option("--key-size <bits>", "size of the generated RSA CA key", KEY_SIZE, d.DEFAULT_KEY_SIZE_BITS)
    .addOption(bool("--pkcs8-keys [bool]", "write keys as PKCS#8 instead of PKCS#1"))
    .option("--org <org>", "certificate organization (subject O of workload certs; of the self-signed root, default the trust domain)", "")
    .addOption(bool("--experimental-dual-use [bool]", "workload certificates carry their identity (the first SAN) as subject CommonName too"))
    .addOption(bool("--sign-ca-certs [bool]", "sign CA certificates for CSRs that ask for CA:TRUE (other mesh_ca instances with --upstream-ca-address)"))
    .option(
      "--upstream-ca-address <host:port>",
      "get this CA's certificate from that mesh_ca (running --sign-ca-certs) instead of holding a root; needs --root-cert and --upstream-ca-token",
      "",
    )
    .option("--upstream-ca-token <file>", "service-account token file this CA presents to the upstream CA (its identity)", "")
    .option("--upstream-ca-server-name <name>", "name the upstream CA's TLS certificate carries (one of its --grpc-host-identities)", d.DEFAULT_CA_SERVER_NAME)
    .addOption(
      duration("--requested-ca-cert-ttl <duration>", "lifetime asked of the upstream CA for this CA's certificate", d.DEFAULT_REQUESTED_CA_CERT_TTL_MS),
    )
    .option("--allowed-namespaces <list>", "comma list of namespaces whose identities may be issued; empty = all", "")
    .option("--grpc-port <port>", "gRPC port; 0 = any free port", UINT16, d.DEFAULT_GRPC_PORT)
    .option("--grpc-address <address>", "address the gRPC port binds to", "0.0.0.0")
    .option(
      "--grpc-host-identities <names>",
      "comma list of DNS names of the CA's TLS certificate; clients dial with one of them as the server name",
      d.DEFAULT_GRPC_HOST_IDENTITIES,
    )
    .addOption(bool("--grpc-plaintext [bool]", "serve gRPC in plain text (local development only: tokens travel in clear, no renewal by certificate)"))
    .option(
      "--token-jwks <file|url>",
      "keys of the service-account token issuer (JWKS file or http(s) URL); default ${TOKEN_JWKS}; see JWT_POLICY, TOKEN_ISSUER, AUDIENCE",
    )
    .option(
      "--trusted-node-accounts <ns/sa,...>",
      "callers (namespace/service-account, proven by their client certificate) that may ask for another workload's certificate (ImpersonatedIdentity): disco-discovery relaying renewals; default ${CA_TRUSTED_NODE_ACCOUNTS}",
    )
    .option("--monitoring-port <port>", "monitoring port (/metrics, /version, /healthz); 0 = any free port", UINT16, d.DEFAULT_MONITORING_PORT)
    .addOption(bool("--enable-profiling [bool]", "serve V8 CPU profiles and heap snapshots at /debug/pprof/ on --monitoring-port"))
    .option("--liveness-probe-path <path>", "liveness file", "")
    .addOption(duration("--liveness-probe-interval <duration>", "liveness file update interval", 0))
    .addOption(
      duration("--probe-check-interval <duration>", "CA liveness check interval (a throwaway CSR signed in-process)", d.DEFAULT_PROBE_CHECK_INTERVAL_MS),
    )
    .option("--ctrlz_port <port>", "ControlZ introspection port", UINT16, DEFAULT_CTRLZ_PORT)
    .option("--ctrlz_address <address>", "ControlZ address; * = every address", DEFAULT_CTRLZ_ADDRESS),
);
addNotApplicableFlags(program, ANCHOR_NOT_APPLICABLE_FLAGS, "mesh_ca");
program.action(async (opts: d.AnchorFlags & Record<string, unknown>) => {
  refuseNotApplicableEnvironment(ANCHOR_NOT_APPLICABLE_ENV, "mesh_ca");
  let logger: Logger;
  try {
    logger = new Logger(d.ANCHOR_LOG_SCOPES, loggingOptionsFrom(opts, d.ANCHOR_LOG_SCOPES));
  } catch (e) {
    usageError("mesh_ca", (e as Error).message);
  }
  const log = logger.scope("default");
  process.on("uncaughtException", (e) => {
    log.fatal(`uncaught exception: ${e.stack ?? e.message}`);
    process.exit(EXIT_FAILURE);
  });
  // The CA (gRPC, protobufjs, @peculiar/x509, jose, prom-client) loads only now that the flags are good.
  const [{ LISTENING_LINE_PREFIX, startAnchorServer }, { tokenSettingsFrom }] = await Promise.all([
    import("../anchor/server.ts"),
    import("../anchor/service_account_token.ts"),
  ]);
  let server;
  try {
    server = await startAnchorServer(
      d.anchorServerOptions(opts, tokenSettingsFrom(process.env, opts.tokenJwks), anchorEnvironment(), process.env.CA_TRUSTED_NODE_ACCOUNTS),
      { logger },
    );
  } catch (e) {
    const bad = e instanceof AnchorConfigError;
    log.error(`failed to start: ${(e as Error).message}`);
    logger.close();
    process.exit(bad ? EXIT_BAD_CONFIG : EXIT_FAILURE);
  }
  serveUntilSignal(LISTENING_LINE_PREFIX, server.listeners, () => server.close(), log, logger);
});

addNotApplicableFlags(
  addLoggingFlags(
    program
      .command("probe")
      .description("Checks the liveness or readiness of a locally-running server")
      .option("--probe-path <path>", "path of the file to check", "")
      .addOption(new Option("--interval <duration>", "the file must have been updated within this duration").argParser(durationFlag).default(0, "0s")),
  ),
  ANCHOR_CTRLZ_ONLY_FLAGS("probe"),
  "mesh_ca probe",
).action((opts: { probePath: string; interval: number }) => {
  const problem = checkProbeFile(opts.probePath, opts.interval);
  if (problem !== undefined) {
    process.stderr.write(`probe failed: ${problem}\n`);
    process.exit(EXIT_FAILURE);
  }
});

program
  .command("token")
  .description("Mints a service-account token for a workload (a mesh without an orchestrator); creates the issuer key in --issuer-dir on first use")
  .requiredOption("--issuer-dir <dir>", "the issuer's directory: issuer-key.pem (created when absent, mode 0600) and jwks.json (mesh_ca --token-jwks)")
  .requiredOption("--namespace <ns>", "namespace of the workload")
  .requiredOption("--service-account <sa>", "service account of the workload")
  .option("--issuer <iss>", "the token's iss (mesh_ca's TOKEN_ISSUER)", d.DEFAULT_LOCAL_ISSUER)
  .option("--audience <aud>", "the token's aud, comma list (mesh_ca's AUDIENCE)", "mesh-ca")
  .addOption(duration("--ttl <duration>", "token lifetime", d.DEFAULT_TOKEN_TTL_MS))
  .option("--out <file>", "write the token to this file (mode 0600) instead of stdout")
  .action(async (opts: { issuerDir: string; namespace: string; serviceAccount: string; issuer: string; audience: string; ttl: number; out?: string }) => {
    const name = /^[A-Za-z0-9._-]+$/;
    if (!name.test(opts.namespace) || !name.test(opts.serviceAccount)) {
      process.stderr.write("error: --namespace and --service-account must be letters, digits, '.', '-' or '_'\n");
      process.exit(EXIT_BAD_CONFIG);
    }
    if (opts.ttl <= 0) {
      process.stderr.write("error: --ttl must be positive\n");
      process.exit(EXIT_BAD_CONFIG);
    }
    const { loadOrCreateIssuerKey, mintServiceAccountToken, writeTokenFile } = await import("../anchor/token_issuer.ts");
    const key = await loadOrCreateIssuerKey(opts.issuerDir);
    const token = await mintServiceAccountToken(key, {
      namespace: opts.namespace,
      serviceAccount: opts.serviceAccount,
      issuer: opts.issuer,
      audiences: opts.audience
        .split(",")
        .map((a) => a.trim())
        .filter(Boolean),
      ttlMs: opts.ttl,
    });
    if (opts.out) writeTokenFile(opts.out, token);
    else process.stdout.write(`${token}\n`);
  });

addNotApplicableFlags(addLoggingFlags(addVersionCommand(program)), ANCHOR_CTRLZ_ONLY_FLAGS("version"), "mesh_ca version");

await program.parseAsync(process.argv);
