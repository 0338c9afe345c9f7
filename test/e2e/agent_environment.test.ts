// disco-agent's spec 2 variables with a real mesh_ca: CA_ADDR, TRUST_DOMAIN,
// SECRET_TTL, SECRET_GRACE_DURATION, INITIAL_BACKOFF_MSEC, OUTPUT_KEY_CERT_TO_DIRECTORY and PKCS8_KEY.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CaProcess, startCa } from "../anchor/support/ca_process.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { tempDir, waitFor } from "../support/processes.ts";
import { initialJitterMs } from "../../host/proxy/workload_tls.ts";
import { spawnSync } from "node:child_process";

const AGENT = join(import.meta.dirname, "..", "..", "build", "out", "disco-agent.mjs");

describe("disco-agent reads CA_ADDR, TRUST_DOMAIN, SECRET_TTL, SECRET_GRACE_DURATION, OUTPUT_KEY_CERT_TO_DIRECTORY, PKCS8_KEY", () => {
  let ca: CaProcess | undefined;
  const agents: Array<Daemon<unknown>> = [];
  before(async () => {
    ca = await startCa(["--self-signed-ca", "--trust-domain", "example.org"]);
  });
  after(async () => {
    for (const a of agents) await a.stop("SIGKILL");
    await ca?.stop("SIGKILL");
  });

  // The CA issues only to a caller proving its identity: a token for foo/default, over TLS.
  const credentials = async () => {
    const dir = tempDir("agent-env-creds-");
    writeFileSync(join(dir, "token"), await ca!.token("foo", "default"));
    writeFileSync(join(dir, "root-cert.pem"), ca!.rootPem());
    return ["--tokenPath", join(dir, "token"), "--caRootCert", join(dir, "root-cert.pem"), "--controlPlaneAuthPolicy", "MUTUAL_TLS"];
  };

  const startAgent = async (env: NodeJS.ProcessEnv) => {
    const agent = await startDaemon(
      AGENT,
      ["proxy", "--configDir", tempDir("agent-env-"), "--proxyAdminPort", "0", "--inboundPort", "0", "--outboundPort", "0", ...(await credentials())],
      "disco-agent listening ",
      60_000,
      {
        ...process.env,
        POD_NAMESPACE: "foo",
        POD_NAME: "app",
        ...env,
      },
    );
    agents.push(agent);
    return agent;
  };

  it("gets its certificate from CA_ADDR for TRUST_DOMAIN with the SECRET_TTL lifetime, and writes key and certificates (PKCS#1 by default)", async () => {
    const out = tempDir("agent-certs-");
    const agent = await startAgent({ CA_ADDR: ca!.address, TRUST_DOMAIN: "example.org", SECRET_TTL: "2h", OUTPUT_KEY_CERT_TO_DIRECTORY: out });
    const leaf = new X509Certificate(readFileSync(join(out, "cert-chain.pem"), "utf8"));
    assert.equal(leaf.subjectAltName, "URI:spiffe://example.org/ns/foo/sa/default");
    const lifetimeMs = Date.parse(leaf.validTo) - Date.parse(leaf.validFrom);
    assert.ok(Math.abs(lifetimeMs - 2 * 3_600_000) <= 5 * 60_000, `lifetime ${lifetimeMs} ms`);
    assert.match(readFileSync(join(out, "key.pem"), "utf8"), /^-----BEGIN RSA PRIVATE KEY-----\n/);
    const root = new X509Certificate(readFileSync(join(out, "root-cert.pem"), "utf8"));
    assert.ok(leaf.verify(root.publicKey), "the leaf chains to the written root");
    assert.equal(await agent.stop(), 0);
  });

  it("SECRET_GRACE_DURATION: the certificate is renewed that long before it expires (not at the CA's half-life)", async () => {
    const out = tempDir("agent-certs-");
    // 30 s certificates: the CA's grace ratio (0.5) would renew after 15 s; a 25 s grace renews after 5 s.
    const agent = await startAgent({
      CA_ADDR: ca!.address,
      TRUST_DOMAIN: "example.org",
      SECRET_TTL: "30s",
      SECRET_GRACE_DURATION: "25s",
      OUTPUT_KEY_CERT_TO_DIRECTORY: out,
    });
    const m = /expires (\S+), renewal at (\S+)/.exec(agent.output());
    assert.ok(m, agent.output());
    assert.equal(Date.parse(m[1]) - Date.parse(m[2]), 25_000, "renewal at expiry minus SECRET_GRACE_DURATION");
    const serial = () => new X509Certificate(readFileSync(join(out, "cert-chain.pem"), "utf8")).serialNumber;
    const first = serial();
    await waitFor("a renewed certificate", () => (serial() !== first ? true : undefined), 120_000);
    assert.equal(await agent.stop(), 0);
  });

  it("SECRET_GRACE_DURATION not shorter than the requested lifetime: exit 2 naming it; a bad value too", () => {
    const run = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, [AGENT, "proxy", "--configDir", tempDir("agent-env-")], {
        encoding: "utf8",
        env: { ...process.env, ...env },
        timeout: 600_000,
      });
    const long = run({ SECRET_TTL: "1h", SECRET_GRACE_DURATION: "2h" });
    assert.equal(long.status, 2);
    assert.match(long.stderr, /SECRET_GRACE_DURATION=2h0m0s is not shorter than the requested certificate lifetime 1h0m0s/);
    const bad = run({ SECRET_GRACE_DURATION: "soon" });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /SECRET_GRACE_DURATION="soon": expected a positive duration/);
  });

  it("INITIAL_BACKOFF_MSEC: the certificate request waits a random 0 … that many ms first; a bad value is exit 2", async () => {
    assert.deepEqual([initialJitterMs(1500, () => 0), initialJitterMs(1500, () => 0.9999), initialJitterMs(0, () => 0.5)], [0, 1499, 0]);
    const agent = await startAgent({ CA_ADDR: ca!.address, TRUST_DOMAIN: "example.org", INITIAL_BACKOFF_MSEC: "1500" });
    const m = /waiting (\d+) ms before the certificate request \(INITIAL_BACKOFF_MSEC\)/.exec(agent.output());
    // Math.random may pick 0 (no wait, no line): then the first request went out at once, as asked.
    if (m) assert.ok(Number(m[1]) < 1500, m[0]);
    assert.equal(await agent.stop(), 0);
    const bad = spawnSync(process.execPath, [AGENT, "proxy", "--configDir", tempDir("agent-env-")], {
      encoding: "utf8",
      env: { ...process.env, INITIAL_BACKOFF_MSEC: "1s" },
      timeout: 600_000,
    });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /INITIAL_BACKOFF_MSEC="1s": expected a non-negative integer of milliseconds/);
  });

  it("PKCS8_KEY=true writes a PKCS#8 key", async () => {
    const out = tempDir("agent-certs-");
    const agent = await startAgent({ CA_ADDR: ca!.address, TRUST_DOMAIN: "example.org", OUTPUT_KEY_CERT_TO_DIRECTORY: out, PKCS8_KEY: "true" });
    assert.match(readFileSync(join(out, "key.pem"), "utf8"), /^-----BEGIN PRIVATE KEY-----\n/);
    assert.equal(await agent.stop(), 0);
  });
});
