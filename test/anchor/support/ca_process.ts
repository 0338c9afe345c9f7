// Test support: a real `mesh_ca` process on loopback, and CSR helpers.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Daemon, startDaemon, tempDir, waitFor as pollFor } from "../../support/processes.ts";
import type { CaCallAuth } from "../../../host/anchor/client.ts";
import { generateKeyPair } from "../../../host/anchor/keys.ts";
import { DEFAULT_LOCAL_ISSUER, loadOrCreateIssuerKey, mintServiceAccountToken, type TokenClaims } from "../../../host/anchor/token_issuer.ts";
import type { AnchorListeners } from "../../../host/anchor/server.ts";
import { x509 } from "../../../host/anchor/x509.ts";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const MESH_CA_BIN = join(ROOT, "build", "out", "mesh_ca.mjs");

export type CaProcess = Daemon<AnchorListeners> & {
  address: string;
  monitoringUrl: string;
  ctrlzUrl: string;
  /** The token issuer's directory (`--token-jwks` is its jwks.json). */
  issuerDir: string;
  /** The roots clients trust the CA's TLS certificate with (its root-cert.pem or --root-cert). */
  rootPem(): string;
  /** A service-account token of the CA's issuer (claims overridable, e.g. another audience). */
  token(namespace: string, serviceAccount: string, claims?: Partial<TokenClaims>): Promise<string>;
  /** Token and TLS settings of a first request for `ns`/`sa`. */
  auth(namespace: string, serviceAccount: string): Promise<CaCallAuth>;
};

/**
 * `node build/out/mesh_ca.mjs` with every listener on an ephemeral loopback
 * port, no rotator jitter, token authentication with a fresh issuer key
 * (TOKEN_ISSUER mesh-token-issuer), and TLS on gRPC; a self-signed CA keeps
 * its root in a temporary directory unless the args name one.
 */
export async function startCa(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<CaProcess> {
  if (!existsSync(MESH_CA_BIN)) throw new Error(`${MESH_CA_BIN} is missing: run node build/build.mjs first`);
  const issuerDir = tempDir("mesh-ca-issuer-");
  const issuer = await loadOrCreateIssuerKey(issuerDir);
  const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const extra: string[] = [];
  let rootFile = flag("--root-cert");
  if (args.includes("--self-signed-ca")) {
    let dir = flag("--self-signed-ca-cert-dir");
    if (!dir) extra.push("--self-signed-ca-cert-dir", (dir = tempDir("mesh-ca-root-")));
    rootFile = join(dir, "root-cert.pem");
  }
  const daemon = await startDaemon<AnchorListeners>(
    MESH_CA_BIN,
    [
      "--grpc-port",
      "0",
      "--grpc-address",
      "127.0.0.1",
      "--monitoring-port",
      "0",
      "--ctrlz_port",
      "0",
      "--ctrlz_address",
      "127.0.0.1",
      "--token-jwks",
      issuer.jwksFile,
      ...extra,
      ...args,
    ],
    "mesh_ca listening ",
    undefined,
    { ...process.env, ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false", TOKEN_ISSUER: DEFAULT_LOCAL_ISSUER, ...env },
  );
  const rootPem = () => readFileSync(rootFile!, "utf8");
  const token = (namespace: string, serviceAccount: string, claims: Partial<TokenClaims> = {}) =>
    mintServiceAccountToken(issuer, { namespace, serviceAccount, ...claims });
  return {
    ...daemon,
    address: daemon.listening.grpc,
    monitoringUrl: `http://127.0.0.1:${daemon.listening.monitoringPort}`,
    ctrlzUrl: `http://127.0.0.1:${daemon.listening.ctrlzPort}`,
    issuerDir,
    rootPem,
    token,
    auth: async (namespace, serviceAccount) => ({
      token: await token(namespace, serviceAccount),
      ...(daemon.listening.grpcTls ? { tls: { rootPem: rootPem() } } : {}),
    }),
  };
}

export async function metricsText(ca: CaProcess): Promise<string> {
  return (await fetch(`${ca.monitoringUrl}/metrics`)).text();
}

/** The value of one series (`name` or `name{labels}`) in Prometheus text, or undefined. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A PEM CSR with the given URI SANs, on a fast ECDSA key; `forCa` asks for CA:TRUE. */
export async function csrFor(uris: string[], keys?: CryptoKeyPair, forCa = false): Promise<string> {
  const k = keys ?? (await generateKeyPair("ECDSA"));
  const extensions: InstanceType<typeof x509.Extension>[] =
    uris.length > 0 ? [new x509.SubjectAlternativeNameExtension(uris.map((value) => ({ type: "url" as const, value })))] : [];
  if (forCa) extensions.push(new x509.BasicConstraintsExtension(true, undefined, true));
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ keys: k, signingAlgorithm: { name: "ECDSA", hash: "SHA-256" }, extensions });
  return csr.toString("pem");
}

/** Polls until `probe` returns something other than undefined (test/support/processes.ts `waitFor`; limits of at least 60 s). */
export function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs?: number): Promise<T> {
  return pollFor(what, probe, timeoutMs);
}
