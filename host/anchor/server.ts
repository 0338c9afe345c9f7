import { bindNamed } from "../daemon/bind.ts";
import type * as grpc from "@grpc/grpc-js";
import { shutdownGrpcServer } from "../wire/raw_grpc.ts";
import { CERTIFICATE_SERVICE } from "./protocol.ts";
import { formatGoDuration } from "../daemon/duration.ts";
import { buildInfo } from "../daemon/version.ts";
import { ProbeFile } from "../daemon/probes.ts";
import { startCtrlz } from "../telemetry/ctrlz.ts";
import type { Logger } from "../telemetry/logger.ts";
import { startMonitoring } from "../telemetry/monitoring_server.ts";
import { CertificateAuthority } from "./certificate_authority.ts";
import { AnchorConfigError } from "./errors.ts";
import { bindInsecure, bindTls, createCertificateServer, grpcHostPort } from "./grpc_service.ts";
import { ServiceAccountTokenVerifier } from "./service_account_token.ts";
import { SERVING_CERT_TTL_MS, ServingCertificateProvider } from "./serving_certificate.ts";
import { CaSelfCheck } from "./liveness.ts";
import { AnchorMetrics } from "./metrics.ts";
import { ignoredFlagsSet, SHUTDOWN_GRACE_MS, type AnchorServerOptions } from "./options.ts";
import { RootRotator } from "./root_rotation.ts";
import { NODE_TIMERS, type Timers } from "./timers.ts";
import { SelfSignedCa } from "./self_signed_ca.ts";
import { loadPluggedBundle } from "./signing_bundle.ts";
import { startUpstreamCa } from "./upstream_ca.ts";
import { isValidTrustDomain } from "./spiffe.ts";

/** The prefix of the one stdout line that tells where every listener is bound (docs/mesh_ca.md). */
export const LISTENING_LINE_PREFIX = "mesh_ca listening ";

export interface AnchorListeners {
  grpc: string;
  grpcPort: number;
  /** false with --grpc-plaintext. */
  grpcTls: boolean;
  monitoring: string;
  monitoringPort: number;
  ctrlz: string;
  ctrlzPort: number;
}

export interface AnchorServer {
  listeners: AnchorListeners;
  metrics: AnchorMetrics;
  ca: CertificateAuthority;
  /** One root check now (what the rotator runs every interval); true when the root changed. */
  checkRoot(): Promise<boolean>;
  close(): Promise<void>;
}

export interface AnchorServerDeps {
  logger: Logger;
  now?: () => number;
  timers?: Timers;
  random?: () => number;
  /**
   * false: no gRPC health and reflection services, and their libraries are
   * never loaded (a quarter of a second of CPU): for a CA embedded where
   * nothing probes or lists it (`meshctl x simulate`). Default true.
   */
  introspection?: boolean;
}

/** Flag values that make no sense here and must not pass unnoticed. */
export function validateOptions(o: AnchorServerOptions): void {
  if (!isValidTrustDomain(o.trustDomain))
    throw new AnchorConfigError(`--trust-domain ${JSON.stringify(o.trustDomain)}: expected lower-case letters, digits, '.', '-' or '_'`);
  if (o.workloadCertTtlMs <= 0) throw new AnchorConfigError("--workload-cert-ttl must be positive");
  if (o.workloadCertTtlMs > o.maxWorkloadCertTtlMs) {
    throw new AnchorConfigError(
      `--workload-cert-ttl ${formatGoDuration(o.workloadCertTtlMs)} is greater than --max-workload-cert-ttl ${formatGoDuration(o.maxWorkloadCertTtlMs)}: every default request would be refused`,
    );
  }
  if (!(o.workloadCertGracePeriodRatio >= 0 && o.workloadCertGracePeriodRatio <= 1))
    throw new AnchorConfigError("--workload-cert-grace-period-ratio must be from 0 to 1");
  if (o.upstreamCaAddress && o.selfSignedCa)
    throw new AnchorConfigError(
      "--upstream-ca-address and --self-signed-ca exclude each other: the CA's certificate comes from the upstream CA or is self-signed",
    );
  if (o.upstreamCaAddress && (o.signingCert || o.signingKey))
    throw new AnchorConfigError(
      "--upstream-ca-address and --signing-cert/--signing-key exclude each other: the CA's key and certificate come from the upstream CA",
    );
  if (!o.selfSignedCa && !o.upstreamCaAddress && (!o.signingCert || !o.signingKey))
    throw new AnchorConfigError("one of --self-signed-ca, --upstream-ca-address, or both --signing-cert and --signing-key is required");
  if (o.requestedCaCertTtlMs <= 0) throw new AnchorConfigError("--requested-ca-cert-ttl must be positive");
  if (!o.grpcPlaintext && o.grpcHostIdentities.length === 0)
    throw new AnchorConfigError("--grpc-host-identities: at least one host name is needed for the CA's TLS certificate");
  for (const name of o.grpcHostIdentities) {
    if (!/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(name))
      throw new AnchorConfigError(`--grpc-host-identities: ${JSON.stringify(name)} is not a DNS name`);
  }
}

/** Starts mesh_ca: the CA first (a bad key or file stops everything), then monitoring, ControlZ, the rotator, probes and gRPC. */
export async function startAnchorServer(options: AnchorServerOptions, deps: AnchorServerDeps): Promise<AnchorServer> {
  validateOptions(options);
  const { logger } = deps;
  const now = deps.now ?? Date.now;
  const log = logger.scope("default");
  const pkiLog = logger.scope("pkica");
  const rotatorLog = logger.scope("rootcertrotator");
  const servingLog = logger.scope("serverca");
  const metrics = new AnchorMetrics();
  let closing = false;
  let serving = false;

  for (const flag of ignoredFlagsSet(options.ignored)) log.info(`${flag} has no effect in this CA (see docs/mesh_ca.md)`);
  if (options.selfSignedCa && (options.signingCert || options.signingKey)) log.info("--self-signed-ca is set: --signing-cert and --signing-key are ignored");

  const ca = new CertificateAuthority(
    {
      trustDomain: options.trustDomain,
      org: options.org,
      defaultTtlMs: options.workloadCertTtlMs,
      maxTtlMs: options.maxWorkloadCertTtlMs,
      allowedNamespaces: new Set(options.allowedNamespaces),
      dualUse: options.dualUse,
      signCaCerts: options.signCaCerts,
    },
    { ratio: options.workloadCertGracePeriodRatio, minGraceMs: options.env.workloadCertMinGracePeriodMs },
    metrics,
    now,
  );

  const tokens = options.tokens.jwks ? new ServiceAccountTokenVerifier(options.tokens, now) : undefined;
  if (tokens) {
    servingLog.info("first certificates need a service-account token", {
      jwtPolicy: options.tokens.policy,
      issuer: options.tokens.issuer || "(any issuer of the key set)",
      audiences: options.tokens.audiences,
      jwks: options.tokens.jwks,
    });
  } else {
    log.warn("no token keys configured (--token-jwks / TOKEN_JWKS): first certificates are refused; only renewals by certificate are possible");
  }

  // Built before the root: loading the descriptors for reflection takes a moment that must not
  // count against a freshly generated root's lifetime.
  const trusted = new Set(options.trustedNodeAccounts ?? []);
  if (trusted.size > 0) servingLog.info(`callers that may ask on a workload's behalf (ImpersonatedIdentity): ${[...trusted].join(", ")}`);
  const server: grpc.Server = createCertificateServer(ca, metrics, servingLog, tokens, trusted);
  const health =
    deps.introspection === false
      ? undefined
      : (await import("../wire/grpc_introspection.ts")).addGrpcIntrospection(server, {
          services: [CERTIFICATE_SERVICE],
          protoFiles: ["mesh/anchor/v1/anchor.proto"],
        });

  // The CA's own TLS certificate, reissued on root changes and at half its lifetime.
  const servingCert = options.grpcPlaintext ? undefined : new ServingCertificateProvider();
  const renewServing = async () => {
    const bundle = ca.current();
    if (servingCert && bundle) await servingCert.update(bundle, options.grpcHostIdentities, now());
  };

  let selfSigned: SelfSignedCa | undefined;
  let upstream: { stop(): void } | undefined;
  if (options.upstreamCaAddress) {
    upstream = await startUpstreamCa({
      address: options.upstreamCaAddress,
      rootCertFile: options.rootCert,
      tokenFile: options.upstreamCaToken,
      serverName: options.upstreamCaServerName,
      trustDomain: options.trustDomain,
      requestedTtlMs: options.requestedCaCertTtlMs,
      keySize: options.keySize,
      log: pkiLog,
      timers: deps.timers,
      now,
      onBundle: async (bundle) => {
        ca.setBundle(bundle);
        await renewServing();
      },
    });
  } else if (options.selfSignedCa) {
    selfSigned = await SelfSignedCa.start({
      org: options.org || options.trustDomain,
      keySize: options.keySize,
      rootTtlMs: options.env.selfSignedCaCertTtlMs,
      gracePercentile: options.env.rootCertGracePeriodPercentile,
      pkcs8: options.pkcs8Keys,
      dir: options.selfSignedCaCertDir,
      readOnly: options.readSigningCertOnly,
      now,
      log: pkiLog,
    });
    ca.setBundle(selfSigned.bundle);
  } else {
    const bundle = await loadPluggedBundle({
      signingCert: options.signingCert,
      signingKey: options.signingKey,
      certChain: options.certChain,
      rootCert: options.rootCert,
    });
    ca.setBundle(bundle);
    pkiLog.info("loaded the signing certificate", {
      subject: bundle.signingCert.subject,
      notAfter: bundle.signingCert.notAfter.toISOString(),
      roots: bundle.roots.length,
      intermediates: bundle.chain.length,
    });
  }

  await renewServing();

  const checkRoot = async () => {
    if (!selfSigned) return false;
    const changed = await selfSigned.checkAndRotate();
    ca.setBundle(selfSigned.bundle);
    if (changed) await renewServing();
    return changed;
  };

  const closers: Array<() => Promise<void> | void> = [];
  if (upstream) closers.push(() => upstream.stop());
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const monitoring = await bindNamed(
      "--monitoring-port",
      options.monitoringPort,
      startMonitoring({
        port: options.monitoringPort,
        registry: metrics.registry,
        info: buildInfo,
        healthy: () => serving && !closing,
        profiling: options.enableProfiling,
      }),
    );
    closers.push(() => monitoring.close());
    logger.scope("monitor").info(`self-monitoring (/metrics, /version, health) on port ${monitoring.port}`, { profiling: options.enableProfiling });

    const ctrlz = await bindNamed(
      "--ctrlz_port",
      `${options.ctrlzAddress}:${options.ctrlzPort}`,
      startCtrlz({
        address: options.ctrlzAddress,
        port: options.ctrlzPort,
        component: "mesh_ca",
        info: buildInfo,
        logger,
        now,
        sections: {
          ca: () => {
            const b = ca.current();
            return {
              trustDomain: options.trustDomain,
              mode: options.upstreamCaAddress ? `upstream CA ${options.upstreamCaAddress}` : options.selfSignedCa ? "self-signed" : "signing-cert",
              signingCert: b && { subject: b.signingCert.subject, serial: b.signingCert.serialNumber, notAfter: b.signingCert.notAfter.toISOString() },
              roots: b?.roots.map((r) => ({ serial: r.serialNumber, notBefore: r.notBefore.toISOString(), notAfter: r.notAfter.toISOString() })),
              intermediates: b?.chain.length,
            };
          },
          workloadCerts: () => ({
            ttl: formatGoDuration(options.workloadCertTtlMs),
            maxTtl: formatGoDuration(options.maxWorkloadCertTtlMs),
            gracePeriodRatio: options.workloadCertGracePeriodRatio,
            minGracePeriod: formatGoDuration(options.env.workloadCertMinGracePeriodMs),
            allowedNamespaces: options.allowedNamespaces,
            lastIssued: ca.lastIssued,
          }),
        },
      }),
    );
    closers.push(() => ctrlz.close());

    if (selfSigned) {
      const rotator = new RootRotator({
        checkIntervalMs: options.env.rootCertCheckIntervalMs,
        jitter: options.env.rotatorJitter,
        check: checkRoot,
        log: rotatorLog,
        timers: deps.timers,
        random: deps.random,
      });
      rotator.start();
      closers.push(() => rotator.stop());
    }

    if (options.livenessProbePath && options.livenessProbeIntervalMs > 0) {
      const selfCheck = new CaSelfCheck(() => ca.current(), options.trustDomain, pkiLog, now);
      await selfCheck.check();
      selfCheck.start(options.probeCheckIntervalMs > 0 ? options.probeCheckIntervalMs : options.livenessProbeIntervalMs);
      const liveness = new ProbeFile(options.livenessProbePath, options.livenessProbeIntervalMs, () => selfCheck.healthy && !closing, now);
      liveness.start();
      closers.push(() => {
        selfCheck.stop();
        liveness.stop();
      });
    }

    if (servingCert) {
      const timers = deps.timers ?? NODE_TIMERS;
      let handle: unknown;
      const schedule = () => {
        handle = timers.setTimeout(() => {
          renewServing().then(
            () => !closing && schedule(),
            (e: Error) => {
              pkiLog.error(`reissuing the CA's TLS certificate failed: ${e.message}`);
              if (!closing) schedule();
            },
          );
        }, SERVING_CERT_TTL_MS / 2);
      };
      schedule();
      closers.push(() => timers.clearTimeout(handle));
    }

    const hostPort = grpcHostPort(options.grpcAddress, options.grpcPort);
    const grpcPort = await bindNamed("--grpc-port", hostPort, servingCert ? bindTls(server, hostPort, servingCert) : bindInsecure(server, hostPort));
    if (!servingCert)
      log.warn("gRPC is plain text (--grpc-plaintext): tokens travel in clear and renewals cannot be authenticated by certificate; for local development only");
    closers.push(() => {
      health?.setServing(false);
      return shutdownGrpcServer(server, SHUTDOWN_GRACE_MS);
    });
    serving = true;
    health?.setServing(true);

    const listeners: AnchorListeners = {
      grpc: grpcHostPort(options.grpcAddress, grpcPort),
      grpcPort,
      grpcTls: servingCert !== undefined,
      monitoring: monitoring.address,
      monitoringPort: monitoring.port,
      ctrlz: ctrlz.address,
      ctrlzPort: ctrlz.port,
    };
    log.info("mesh_ca serving", { ...listeners, trustDomain: options.trustDomain });
    return {
      listeners,
      metrics,
      ca,
      checkRoot,
      close: async () => {
        if (closing) return;
        closing = true;
        serving = false;
        await closeAll();
      },
    };
  } catch (e) {
    closing = true;
    await closeAll();
    throw e;
  }
}
