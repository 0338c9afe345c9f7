import { readFileSync } from "node:fs";
import { decodeJwt } from "jose";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { CertificateRotator, DEFAULT_CA_SERVER_NAME, requestWorkloadCertificate, splitPem, type WorkloadCertificate } from "./client.ts";
import { AnchorConfigError } from "./errors.ts";
import { importPrivateKeyPem } from "./keys.ts";
import { serviceAccountOfSubject } from "./service_account_token.ts";
import { parseCertificates, verifyBundle, type SigningBundle } from "./signing_bundle.ts";
import { spiffeUri } from "./spiffe.ts";
import type { Timers } from "./timers.ts";

/**
 * Upstream CA mode (`--upstream-ca-address`): this mesh_ca does not hold a
 * root; it asks another mesh_ca (running `--sign-ca-certs`) for a CA
 * certificate of its own and signs workload certificates with it, so a
 * workload's chain is leaf → this CA → (the upstream's intermediates) → the
 * upstream's root. As upstream's key-cert bundle rotator, it renews its CA
 * certificate inside the grace period the upstream states, presenting the
 * current one over mutual TLS (and its token).
 */
export interface UpstreamCaOptions {
  /** `HOST:PORT` of the upstream mesh_ca's gRPC port (TLS). */
  address: string;
  /** `--root-cert`: the roots that sign the upstream's TLS certificate (as upstream's CA client uses it). */
  rootCertFile: string;
  /** Ours `--upstream-ca-token`: a service-account token file proving this CA's identity for its first certificate. */
  tokenFile: string;
  /** The name the upstream's TLS certificate must carry (one of its --grpc-host-identities). */
  serverName: string;
  trustDomain: string;
  /** `--requested-ca-cert-ttl`. */
  requestedTtlMs: number;
  /** `--key-size`: this CA's RSA key. */
  keySize: number;
  log: ScopedLogger;
  /** Every new bundle (the first one too). */
  onBundle: (bundle: SigningBundle) => void | Promise<void>;
  timers?: Timers;
  now?: () => number;
}

/** This CA's identity: the SPIFFE identity of the service account its token names (the upstream checks the token). */
export function identityOfToken(token: string, trustDomain: string, source: string): string {
  let subject: string | undefined;
  try {
    subject = decodeJwt(token).sub;
  } catch (e) {
    throw new AnchorConfigError(`${source}: not a JWT: ${(e as Error).message}`);
  }
  const account = serviceAccountOfSubject(subject);
  if (!account)
    throw new AnchorConfigError(`${source}: the token's subject ${JSON.stringify(subject)} is not system:serviceaccount:<namespace>:<service-account>`);
  return spiffeUri(trustDomain, account.namespace, account.serviceAccount);
}

/** The CA certificate answer as a signing bundle: the CA certificate signs, the chain goes to clients, the upstream's roots are the roots. */
export async function bundleOfCaCertificate(cert: WorkloadCertificate, source: string): Promise<SigningBundle> {
  const { privateKey, publicKey } = await importPrivateKeyPem(cert.keyPem, source);
  const chain = parseCertificates(cert.certChainPem, source);
  const roots = parseCertificates(splitPem(cert.rootPem).join(""), `${source} (roots)`);
  const bundle: SigningBundle = { signingKey: privateKey, signingPublicKey: publicKey, signingCert: chain[0], chain, roots };
  await verifyBundle(bundle, source);
  return bundle;
}

/** Obtains the first CA certificate (rejects if that fails) and keeps it renewed; `stop` ends renewals. */
export async function startUpstreamCa(options: UpstreamCaOptions): Promise<{ stop(): void }> {
  const read = (path: string, flag: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch (e) {
      throw new AnchorConfigError(`${flag} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  if (!options.rootCertFile) throw new AnchorConfigError("--upstream-ca-address needs --root-cert: the roots that sign the upstream CA's TLS certificate");
  if (!options.tokenFile)
    throw new AnchorConfigError("--upstream-ca-address needs --upstream-ca-token: a service-account token the upstream CA accepts for this CA's identity");
  const rootPem = read(options.rootCertFile, "--root-cert");
  parseCertificates(rootPem, `--root-cert ${options.rootCertFile}`);
  const identity = identityOfToken(read(options.tokenFile, "--upstream-ca-token").trim(), options.trustDomain, `--upstream-ca-token ${options.tokenFile}`);
  const source = `CA certificate from ${options.address}`;
  let started = false;
  const rotator: CertificateRotator = new CertificateRotator({
    fetch: () => {
      const current = rotator.current;
      return requestWorkloadCertificate({
        address: options.address,
        identity,
        forCa: true,
        ttl: options.requestedTtlMs,
        keySize: options.keySize,
        auth: {
          // The token is re-read: a projected token file is refreshed in place.
          token: read(options.tokenFile, "--upstream-ca-token").trim(),
          tls: {
            rootPem,
            serverName: options.serverName || DEFAULT_CA_SERVER_NAME,
            ...(current ? { clientKeyPem: current.keyPem, clientCertChainPem: current.certChainPem } : {}),
          },
        },
      });
    },
    onCertificate: (cert) => {
      if (!started) return; // the first one is installed below, before the CA serves
      bundleOfCaCertificate(cert, source).then(
        async (bundle) => {
          await options.onBundle(bundle);
          options.log.info("CA certificate from the upstream CA", {
            identity,
            upstream: options.address,
            serial: cert.serialNumber,
            notAfter: cert.expiresAt.toISOString(),
            renewal: cert.rotateAt.toISOString(),
          });
        },
        (e: Error) => options.log.error(`the upstream CA's answer is not a usable CA certificate: ${e.message}`),
      );
    },
    onError: (e, retryInMs) => options.log.error(`renewing the CA certificate from ${options.address} failed (retry in ${retryInMs} ms): ${e.message}`),
    ...(options.timers ? { timers: options.timers } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const first = await rotator.start().catch((e: Error) => {
    throw new Error(`the upstream CA ${options.address} did not issue this CA's certificate: ${e.message}`);
  });
  await options.onBundle(await bundleOfCaCertificate(first, source));
  options.log.info("CA certificate from the upstream CA", {
    identity,
    upstream: options.address,
    serial: first.serialNumber,
    notAfter: first.expiresAt.toISOString(),
    renewal: first.rotateAt.toISOString(),
  });
  started = true;
  return { stop: () => rotator.stop() };
}
