import { createPrivateKey } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { WorkloadCertificate } from "../anchor/client.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";

/**
 * OUTPUT_KEY_CERT_TO_DIRECTORY (spec 2): the workload key, certificate chain
 * and roots as files (`key.pem`, `cert-chain.pem`, `root-cert.pem`, the key
 * mode 0600), rewritten on each rotation. Keys are PKCS#1 (RSA) or SEC1 (EC)
 * unless PKCS8_KEY is true. A failed write is logged; serving goes on.
 */
export function writeKeyAndCertificates(dir: string, c: WorkloadCertificate, pkcs8: boolean, log: ScopedLogger): void {
  try {
    mkdirSync(dir, { recursive: true });
    const key = createPrivateKey(c.keyPem);
    const keyPem = pkcs8 ? c.keyPem : (key.export({ format: "pem", type: key.asymmetricKeyType === "ec" ? "sec1" : "pkcs1" }) as string);
    writeFileSync(join(dir, "key.pem"), keyPem, { mode: 0o600 });
    writeFileSync(join(dir, "cert-chain.pem"), c.certChainPem);
    writeFileSync(join(dir, "root-cert.pem"), c.rootPem);
  } catch (e) {
    log.error(`OUTPUT_KEY_CERT_TO_DIRECTORY ${dir}: ${(e as Error).message}`);
  }
}
