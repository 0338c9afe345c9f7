import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { AnchorConfigError } from "./errors.ts";
import { exportPrivateKeyPem, generateKeyPair, importPrivateKeyPem } from "./keys.ts";
import { rootRotationDue } from "./root_rotation.ts";
import { createSelfSignedRoot } from "./self_signed_root.ts";
import { parseCertificates, pemOf, verifyBundle, type SigningBundle } from "./signing_bundle.ts";

/** File names in `--self-signed-ca-cert-dir` (the keys of upstream's CA secret). */
export const CA_KEY_FILE = "ca-key.pem";
export const CA_CERT_FILE = "ca-cert.pem";
export const ROOT_CERT_FILE = "root-cert.pem";

export interface SelfSignedCaOptions {
  /** Subject O of the root: `--org`, else the trust domain. */
  org: string;
  keySize: number;
  /** ANCHOR_SELF_SIGNED_CA_CERT_TTL. */
  rootTtlMs: number;
  /** ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE. */
  gracePercentile: number;
  /** `--pkcs8-keys`: how the key is written to the directory. */
  pkcs8: boolean;
  /** `--self-signed-ca-cert-dir`; empty = kept in memory only. */
  dir: string;
  /** `--read-signing-cert-only`: load from dir, never generate or rotate; re-read at each check. */
  readOnly: boolean;
  now: () => number;
  log: ScopedLogger;
}

function writeAtomically(path: string, text: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, path);
}

/**
 * The self-signed CA of `--self-signed-ca`: a root generated at start (or
 * loaded from the directory), rotated by `checkAndRotate` once inside its
 * grace percentile. The new root keeps the key (upstream:
 * GenRootCertFromExistingKey), and the bundle served keeps the previous roots
 * until they expire, so peers holding either root keep verifying each other.
 */
export class SelfSignedCa {
  private constructor(
    private readonly options: SelfSignedCaOptions,
    private keys: CryptoKeyPair,
    private current: SigningBundle,
  ) {}

  get bundle(): SigningBundle {
    return this.current;
  }

  static async start(options: SelfSignedCaOptions): Promise<SelfSignedCa> {
    const { dir, log } = options;
    if (options.readOnly && !dir)
      throw new AnchorConfigError("--read-signing-cert-only needs --self-signed-ca-cert-dir (where another instance writes the CA)");
    if (dir && existsSync(join(dir, CA_KEY_FILE))) {
      const loaded = await SelfSignedCa.load(dir);
      const ca = new SelfSignedCa(options, loaded.keys, loaded.bundle);
      log.info("loaded self-signed root", { dir, serial: loaded.bundle.signingCert.serialNumber, notAfter: loaded.bundle.signingCert.notAfter.toISOString() });
      if (!options.readOnly) await ca.checkAndRotate();
      return ca;
    }
    if (options.readOnly) throw new AnchorConfigError(`--read-signing-cert-only: ${join(dir, CA_KEY_FILE)} does not exist`);
    const keys = await generateKeyPair("RSA", options.keySize);
    const root = await createSelfSignedRoot({ keys, org: options.org, ttlMs: options.rootTtlMs, now: options.now() });
    const ca = new SelfSignedCa(options, keys, { signingKey: keys.privateKey, signingPublicKey: keys.publicKey, signingCert: root, chain: [], roots: [root] });
    await ca.persist(true);
    log.info("generated self-signed root", {
      serial: root.serialNumber,
      notAfter: root.notAfter.toISOString(),
      keySize: options.keySize,
      ...(dir ? { dir } : {}),
    });
    return ca;
  }

  private static async load(dir: string): Promise<{ keys: CryptoKeyPair; bundle: SigningBundle }> {
    const source = `--self-signed-ca-cert-dir ${dir}`;
    const read = (f: string) => readFileSync(join(dir, f), "utf8");
    const keys = await importPrivateKeyPem(read(CA_KEY_FILE), `${source}: ${CA_KEY_FILE}`);
    const [signingCert] = parseCertificates(read(CA_CERT_FILE), `${source}: ${CA_CERT_FILE}`);
    const roots = existsSync(join(dir, ROOT_CERT_FILE)) ? parseCertificates(read(ROOT_CERT_FILE), `${source}: ${ROOT_CERT_FILE}`) : [signingCert];
    const bundle: SigningBundle = { signingKey: keys.privateKey, signingPublicKey: keys.publicKey, signingCert, chain: [], roots };
    await verifyBundle(bundle, source);
    return { keys, bundle };
  }

  private async persist(withKey: boolean): Promise<void> {
    const { dir } = this.options;
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    if (withKey) writeAtomically(join(dir, CA_KEY_FILE), await exportPrivateKeyPem(this.keys.privateKey, this.options.pkcs8), 0o600);
    writeAtomically(join(dir, ROOT_CERT_FILE), this.current.roots.map(pemOf).join(""), 0o644);
    writeAtomically(join(dir, CA_CERT_FILE), pemOf(this.current.signingCert), 0o644);
  }

  /**
   * One rotator check. Read-only: re-reads the directory. Otherwise: drops
   * expired previous roots from the bundle, and when the current root is
   * inside its grace period, issues a new root from the same key and puts it
   * first. Resolves true when the signing root changed.
   */
  async checkAndRotate(): Promise<boolean> {
    const { log } = this.options;
    const now = this.options.now();
    if (this.options.readOnly) {
      const { keys, bundle } = await SelfSignedCa.load(this.options.dir);
      const changed = bundle.signingCert.serialNumber !== this.current.signingCert.serialNumber;
      this.keys = keys;
      this.current = bundle;
      if (changed) log.info("re-read a rotated root from the directory", { serial: bundle.signingCert.serialNumber });
      return changed;
    }
    const root = this.current.signingCert;
    const live = this.current.roots.filter((r) => r === root || r.notAfter.getTime() > now);
    if (!rootRotationDue({ notBefore: root.notBefore.getTime(), notAfter: root.notAfter.getTime() }, now, this.options.gracePercentile)) {
      if (live.length !== this.current.roots.length) {
        this.current = { ...this.current, roots: live };
        await this.persist(false);
      }
      return false;
    }
    const next = await createSelfSignedRoot({ keys: this.keys, org: this.options.org, ttlMs: this.options.rootTtlMs, now });
    this.current = { ...this.current, signingCert: next, roots: [next, ...live.filter((r) => r.notAfter.getTime() > now)] };
    await this.persist(false);
    log.info("rotated the self-signed root", {
      previousSerial: root.serialNumber,
      previousNotAfter: root.notAfter.toISOString(),
      serial: next.serialNumber,
      notAfter: next.notAfter.toISOString(),
      rootsServed: this.current.roots.length,
    });
    return true;
  }
}
