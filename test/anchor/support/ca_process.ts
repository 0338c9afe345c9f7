// Test support: a real `mesh_ca` process on loopback, and CSR helpers.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Daemon, startDaemon } from "../../../host/demo/processes.ts";
import { generateKeyPair } from "../../../host/anchor/keys.ts";
import type { AnchorListeners } from "../../../host/anchor/server.ts";
import { x509 } from "../../../host/anchor/x509.ts";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const MESH_CA_BIN = join(ROOT, "build", "out", "mesh_ca.mjs");

export type CaProcess = Daemon<AnchorListeners> & { address: string; monitoringUrl: string; ctrlzUrl: string };

/** `node build/out/mesh_ca.mjs --self-signed-ca` with every listener on an ephemeral loopback port and no rotator jitter. */
export async function startCa(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<CaProcess> {
  if (!existsSync(MESH_CA_BIN)) throw new Error(`${MESH_CA_BIN} is missing: run node build/build.mjs first`);
  const daemon = await startDaemon<AnchorListeners>(
    MESH_CA_BIN,
    ["--grpc-port", "0", "--grpc-address", "127.0.0.1", "--monitoring-port", "0", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1", ...args],
    "mesh_ca listening ",
    60_000,
    { ...process.env, ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false", ...env },
  );
  return {
    ...daemon,
    address: daemon.listening.grpc,
    monitoringUrl: `http://127.0.0.1:${daemon.listening.monitoringPort}`,
    ctrlzUrl: `http://127.0.0.1:${daemon.listening.ctrlzPort}`,
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

/** A PEM CSR with the given URI SANs, on a fast ECDSA key. */
export async function csrFor(uris: string[], keys?: CryptoKeyPair): Promise<string> {
  const k = keys ?? (await generateKeyPair("ECDSA"));
  const extensions = uris.length > 0 ? [new x509.SubjectAlternativeNameExtension(uris.map((value) => ({ type: "url" as const, value })))] : [];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ keys: k, signingAlgorithm: { name: "ECDSA", hash: "SHA-256" }, extensions });
  return csr.toString("pem");
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
