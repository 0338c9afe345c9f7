import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { type PeerCertificate } from "node:tls";
import { request } from "node:https";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DISCOVERY_BIN, MESHCTL_BIN } from "../../host/demo/binaries.ts";
import { type SecureWorkload, startMeshCa, startSecureWorkload, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { type Outcome, get, send, waitFor } from "./security_support.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";

// Issue 25 item 7: `mtls: {mdoe: STRICT}` must not leave a workload
// PERMISSIVE. As upstream's strict proto decoding, an unknown field in a
// security resource refuses the document: `meshctl validate` exits 1, the
// validation webhook denies it, and disco-discovery and the sidecar keep
// their last good configuration, log the refusal and count it in
// disco_total_rejected_configs.

const policy = (mtls: string) => `apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  mtls: ${mtls}
`;
const STRICT = policy("{mode: STRICT}");
const TYPO = policy("{mdoe: STRICT}");
const REFUSAL = "PeerAuthentication foo/strict: spec.mtls.mdoe: unknown field (known: mode)";

// Plain text to a STRICT inbound port gets no HTTP answer; PERMISSIVE would answer 200.
const plainText = (port: number) => send(port, { path: "/headers", host: "httpbin.foo:8000" });
const isStrict = (o: Outcome) => o.outcome === "connection-failure";

// Written beside and renamed into place, as an orchestrator swaps a ConfigMap: a watcher never sees the file half written.
function replaceFile(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? "NaN");

describe("unknown fields in security resources are refused (issue 25 item 7)", { timeout: 300_000 }, () => {
  const fromDir = tempDir("mesh-unknown-fields-dir-");
  const discoDir = tempDir("mesh-unknown-fields-disco-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let disco: Daemon<{ secureGrpc?: string; https?: string; monitoring?: string }>;
  let direct: SecureWorkload;
  let overAds: SecureWorkload;

  before(async () => {
    writeFileSync(join(fromDir, "policy.yaml"), STRICT);
    writeFileSync(join(discoDir, "policy.yaml"), STRICT);
    ca = await startMeshCa();
    const certDir = tempDir("mesh-unknown-fields-certs-");
    await writeWorkloadCertFiles(ca, "mesh-system", "disco-discovery", certDir);
    disco = await startDaemon(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        discoDir,
        "--grpcAddr",
        "",
        "--secureGrpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "127.0.0.1:0",
        "--httpsAddr",
        "127.0.0.1:0",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, DISCO_CERT_DIR: certDir, DISCO_DEBOUNCE_AFTER: "100ms" },
    );
    direct = await startSecureWorkload({ configDir: fromDir, ca, name: "httpbin", namespace: "foo" });
    overAds = await startSecureWorkload({
      ca,
      name: "httpbin",
      namespace: "foo",
      configDir: "",
      discoveryAddress: disco.listening.secureGrpc,
      extraArgs: ["--discoIdentity", "sa/disco-discovery"],
    });
  });
  after(async () => {
    await overAds?.stop();
    await direct?.stop();
    await disco?.stop();
    await ca?.stop();
  });

  it("meshctl validate: an Error naming the field, exit 1 (not a warning)", () => {
    const file = join(tempDir("mesh-unknown-fields-validate-"), "typo.yaml");
    writeFileSync(file, TYPO);
    const run = spawnSync(process.execPath, [MESHCTL_BIN, "validate", "-f", file], { encoding: "utf8", timeout: 120_000 });
    assert.equal(run.status, 1, run.stderr);
    assert.ok(run.stderr.includes(`Error: ${file}: ${REFUSAL}`), run.stderr);
    assert.doesNotMatch(run.stderr, /Warning/);
  });

  it("the validation webhook denies the document with the same words", async () => {
    const object = {
      apiVersion: "security.mesh.io/v1",
      kind: "PeerAuthentication",
      metadata: { name: "strict", namespace: "foo" },
      spec: { selector: { matchLabels: { app: "httpbin" } }, mtls: { mdoe: "STRICT" } },
    };
    const body = JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: { uid: "u-1", kind: { group: "security.mesh.io", version: "v1", kind: "PeerAuthentication" }, namespace: "foo", operation: "CREATE", object },
    });
    const [host, port] = disco.listening.https!.split(":");
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          agent: false,
          host,
          port: Number(port),
          path: "/validate",
          method: "POST",
          ca: readFileSync(ca.rootCertFile),
          headers: { "content-type": "application/json" },
          checkServerIdentity: (_h: string, _c: PeerCertificate) => undefined,
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () => resolve(text));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    const review = JSON.parse(answer) as { response: { uid: string; allowed: boolean; status?: { message: string } } };
    assert.equal(review.response.allowed, false);
    assert.ok(review.response.status?.message.includes(REFUSAL), review.response.status?.message);
  });

  it("both sidecars start STRICT", async () => {
    assert.ok(isStrict(await plainText(direct.inbound)));
    assert.ok(isStrict(await plainText(overAds.inbound)));
  });

  it("the sidecar refuses the typo from its folder, logs and counts it, and stays STRICT", async () => {
    const before = metric((await get(`${direct.adminUrl}/stats/prometheus`)).body, "disco_total_rejected_configs_total");
    replaceFile(join(fromDir, "policy.yaml"), TYPO);
    await waitFor("the sidecar's refusal", () => (direct.sidecar.output().includes(REFUSAL) ? true : undefined));
    const after = metric((await get(`${direct.adminUrl}/stats/prometheus`)).body, "disco_total_rejected_configs_total");
    assert.ok(after > before, `disco_total_rejected_configs ${before} → ${after}`);
    assert.ok(isStrict(await plainText(direct.inbound)), "still STRICT: the last good configuration serves");
  });

  it("disco-discovery refuses it too, logs and counts it; the sidecar it configures stays STRICT", async () => {
    const monitoring = `http://${disco.listening.monitoring}/metrics`;
    const before = metric((await get(monitoring)).body, "disco_total_rejected_configs_total");
    // The admission webhook above logged the same refusal: wait for one more line, the watcher's.
    const refusals = () => disco.output().split(REFUSAL).length - 1;
    const logged = refusals();
    replaceFile(join(discoDir, "policy.yaml"), TYPO);
    await waitFor("disco-discovery's refusal", () => (refusals() > logged ? true : undefined));
    const after = metric((await get(monitoring)).body, "disco_total_rejected_configs_total");
    assert.ok(after > before, `disco_total_rejected_configs_total ${before} → ${after}`);
    assert.ok(isStrict(await plainText(overAds.inbound)), "still STRICT: the last good configuration serves");
    assert.doesNotMatch(overAds.sidecar.output(), /PERMISSIVE/);
  });
});
