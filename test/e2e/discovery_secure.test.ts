// disco-discovery's listeners that serve its mesh_ca certificate, real processes on loopback:
// mesh_ca issues disco-discovery's certificate and the sidecar's; the sidecar
// (`disco-agent proxy --discoveryAddress … --controlPlaneAuthPolicy MUTUAL_TLS`) gets its
// configuration over --secureGrpcAddr with its workload certificate and checks
// disco-discovery's identity (--discoIdentity); a caller without a certificate gets no xDS stream.
// The admission webhooks on --httpsAddr answer real AdmissionReview bodies over TLS:
// validation as `meshctl validate` decides, injection as `meshctl orch-inject` injects.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import type { PeerCertificate } from "node:tls";
import fastJsonPatch from "fast-json-patch";
import { parse } from "yaml";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { AGENT_BIN, DISCOVERY_BIN, MESHCTL_BIN } from "../../host/demo/binaries.ts";
import { type MeshCa, type SecureWorkload, startMeshCa, startSecureWorkload, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { type Daemon, spawnOwned, startDaemon, stopOwned, tempDir, waitFor } from "../support/processes.ts";
import { get, sidecarConfig } from "./sidecar_support.ts";

interface Listening {
  grpc?: string;
  secureGrpc?: string;
  http?: string;
  https?: string;
  monitoring?: string;
}

const DISCO_IDENTITY = "spiffe://cluster.local/ns/mesh-system/sa/disco-discovery";

describe("disco-discovery with a mesh_ca certificate: --secureGrpcAddr (xDS over mutual TLS) and --httpsAddr (admission webhooks)", () => {
  let ca: MeshCa;
  let disco: Daemon<Listening>;
  let certDir: string;
  const configDir = tempDir("disco-secure-config-");
  let sidecar: SecureWorkload;

  before(async () => {
    ca = await startMeshCa();
    certDir = tempDir("disco-secure-certs-");
    await writeWorkloadCertFiles(ca, "mesh-system", "disco-discovery", certDir);
    writeFileSync(join(configDir, "config.yaml"), sidecarConfig("FAIL_OPEN"));
    disco = await startDaemon<Listening>(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        configDir,
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
      { ...process.env, DISCO_CERT_DIR: certDir },
    );
  });
  after(async () => {
    await sidecar?.stop();
    await disco?.stop();
    await ca?.stop();
  });

  it("serves only the secure port, as the certificate's identity", () => {
    assert.equal(disco.listening.grpc, undefined, "--grpcAddr '' disables the plain-text port");
    assert.match(disco.listening.secureGrpc ?? "", /^127\.0\.0\.1:\d+$/);
    assert.match(
      disco.output(),
      new RegExp(`xDS \\(mutual TLS\\) on ${disco.listening.secureGrpc} as ${DISCO_IDENTITY}; callers must be workload identities of cluster.local`),
    );
  });

  it("a MUTUAL_TLS sidecar gets its configuration there, checking disco-discovery's identity", async () => {
    sidecar = await startSecureWorkload({
      ca,
      name: "petstore",
      namespace: "demo",
      configDir: "",
      discoveryAddress: disco.listening.secureGrpc,
      extraArgs: ["--discoIdentity", "sa/disco-discovery"],
    });
    assert.match(sidecar.sidecar.output(), /disco-discovery must prove an identity ending with sa\/disco-discovery/);
    // The sidecar serves once it has applied its configuration; its ACK may still be on the way: polled.
    const row = await waitFor("the sidecar's ACK on /debug/syncz", async () => {
      const sync = JSON.parse((await get(`http://${disco.listening.http}/debug/syncz`)).body) as Array<{
        proxy: string;
        type: string;
        sent: string;
        acked: string | null;
      }>;
      const r = sync.find((x) => x.proxy.includes("petstore.demo") && x.type === "config");
      return r?.acked ? r : undefined;
    });
    assert.equal(row.acked, row.sent, "the sidecar acknowledged the configuration it was sent");
  });

  it("a sidecar expecting another identity of disco-discovery does not take its configuration", async () => {
    const token = await ca.tokenFile("demo", "other");
    const agent = spawnOwned(
      process.execPath,
      [
        AGENT_BIN,
        "proxy",
        "--inboundPort",
        "0",
        "--outboundPort",
        "0",
        "--proxyAdminPort",
        "0",
        "--discoveryAddress",
        disco.listening.secureGrpc!,
        "--caAddress",
        ca.address,
        "--tokenPath",
        token,
        "--caRootCert",
        ca.rootCertFile,
        "--controlPlaneAuthPolicy",
        "MUTUAL_TLS",
        "--serviceAccount",
        "other",
        "--workloadKeyAlgorithm",
        "ECDSA",
        "--discoIdentity",
        "sa/some-other-control-plane",
      ],
      { env: { ...process.env, POD_NAME: "other", POD_NAMESPACE: "demo" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    agent.stdout!.on("data", (b: Buffer) => (output += b.toString()));
    agent.stderr!.on("data", (b: Buffer) => (output += b.toString()));
    try {
      await waitFor("the identity refusal logged", () =>
        output.includes(
          `discovery identity: the discovery presented ${DISCO_IDENTITY}, expected an identity of cluster.local ending with sa/some-other-control-plane`,
        )
          ? true
          : undefined,
      );
      assert.doesNotMatch(output, /disco-agent listening/, "no configuration, so it does not serve");
    } finally {
      await stopOwned(agent);
    }
  });

  it("a caller without a client certificate gets no xDS stream (the handshake admits it: a first certificate is asked there with a token)", async () => {
    const roots = readFileSync(ca.rootCertFile);
    const client = new grpc.Client(disco.listening.secureGrpc!, grpc.credentials.createSsl(roots, null, null, { checkServerIdentity: () => undefined }));
    const status = await new Promise<grpc.StatusObject>((resolve) => {
      const call = client.makeBidiStreamRequest(
        "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
        (b: Buffer) => b,
        (b: Buffer) => b,
      );
      call.on("data", () => undefined);
      call.on("error", () => undefined);
      call.on("status", resolve);
    });
    client.close();
    assert.equal(status.code, grpc.status.PERMISSION_DENIED, status.details);
    assert.match(status.details, /client certificate identity \(no URI SAN\) is not a workload identity/);
  });

  /** POSTs a body to the webhook port, trusting mesh_ca's root and checking disco-discovery's identity. */
  function post(path: string, body: string, contentType = "application/json"): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const [host, port] = [disco.listening.https!.split(":")[0], Number(disco.listening.https!.split(":")[1])];
      const req = request(
        {
          // A new connection per request: with the default kept-alive agent, a socket the server closed after its
          // 5 s idle timeout (a loaded machine gets there between two tests) fails the next request with a hang-up.
          agent: false,
          host,
          port,
          path,
          method: "POST",
          ca: readFileSync(ca.rootCertFile),
          headers: { "content-type": contentType },
          checkServerIdentity: (_h: string, cert: PeerCertificate) =>
            (cert.subjectaltname ?? "").includes(`URI:${DISCO_IDENTITY}`) ? undefined : new Error(`unexpected ${cert.subjectaltname}`),
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }
  const review = (uid: string, object: Record<string, unknown>, namespace: string, kind: string) =>
    JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: { uid, kind: { group: "", version: "v1", kind }, namespace, operation: "CREATE", object },
    });
  type Answer = {
    apiVersion: string;
    kind: string;
    response: { uid: string; allowed: boolean; status?: { message: string }; patchType?: string; patch?: string };
  };

  it("validation webhook: a valid resource is admitted, an invalid one refused with its field path", async () => {
    const good = {
      apiVersion: "security.mesh.io/v1",
      kind: "AuthorizationPolicy",
      metadata: { name: "deny-admin", namespace: "demo" },
      spec: { action: "DENY", rules: [{ to: [{ operation: { paths: ["/admin"] } }] }] },
    };
    const ok = await post("/validate", review("uid-1", good, "demo", "AuthorizationPolicy"));
    assert.equal(ok.status, 200, ok.body);
    const okAnswer = JSON.parse(ok.body) as Answer;
    assert.equal(okAnswer.apiVersion, "admission.k8s.io/v1");
    assert.deepEqual(okAnswer.response, { uid: "uid-1", allowed: true });
    const bad = { ...good, spec: { action: "MAYBE" } };
    const refused = JSON.parse((await post("/validate", review("uid-2", bad, "demo", "AuthorizationPolicy"))).body) as Answer;
    assert.equal(refused.response.uid, "uid-2");
    assert.equal(refused.response.allowed, false);
    assert.match(refused.response.status!.message, /AuthorizationPolicy demo\/deny-admin: spec\.action: /);
    // meshctl validate refuses the same document with the same words.
    const file = join(tempDir("disco-validate-"), "bad.json");
    writeFileSync(file, JSON.stringify(bad));
    const cli = spawnSync(process.execPath, [MESHCTL_BIN, "validate", "-f", file], { encoding: "utf8", timeout: 120_000 });
    assert.equal(cli.status, 1);
    assert.ok(cli.stderr.includes(refused.response.status!.message), `${cli.stderr}\nvs\n${refused.response.status!.message}`);
  });

  it("injection webhook: a Pod gets the sidecar meshctl orch-inject adds, as a base64 JSONPatch", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "petstore-1", labels: { app: "petstore" } },
      spec: { containers: [{ name: "app", image: "petstore:1", ports: [{ containerPort: 8080 }] }] },
    };
    const answer = JSON.parse((await post("/inject", review("uid-3", pod, "demo", "Pod"))).body) as Answer;
    assert.equal(answer.response.uid, "uid-3");
    assert.equal(answer.response.allowed, true);
    assert.equal(answer.response.patchType, "JSONPatch");
    const patch = JSON.parse(Buffer.from(answer.response.patch!, "base64").toString("utf8")) as fastJsonPatch.Operation[];
    const patched = fastJsonPatch.applyPatch(structuredClone(pod), patch, true, false).newDocument as unknown as {
      metadata: { annotations: Record<string, string> };
      spec: { containers: Array<{ name: string }> };
    };
    assert.deepEqual(
      patched.spec.containers.map((c) => c.name),
      ["app", "mesh-proxy"],
    );
    assert.ok("sidecar.mesh.io/status" in patched.metadata.annotations);
    // The same Pod through meshctl orch-inject: the same result.
    const file = join(tempDir("disco-inject-"), "pod.yaml");
    writeFileSync(file, JSON.stringify({ ...pod, metadata: { ...pod.metadata, namespace: "demo" } }));
    const cli = spawnSync(process.execPath, [MESHCTL_BIN, "orch-inject", "-f", file], { encoding: "utf8", timeout: 120_000 });
    assert.equal(cli.status, 0, cli.stderr);
    const viaCli = parse(cli.stdout) as { metadata: Record<string, unknown>; spec: unknown };
    assert.deepEqual(patched.spec, viaCli.spec);
    assert.deepEqual(patched.metadata.annotations, viaCli.metadata.annotations);
  });

  it("injection webhook: an opted-out Pod is admitted unchanged; a body that is not a review gets 400; all counted", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "batch", annotations: { "sidecar.mesh.io/inject": "false" } },
      spec: { containers: [{ name: "job", image: "job:1" }] },
    };
    const answer = JSON.parse((await post("/inject", review("uid-4", pod, "demo", "Pod"))).body) as Answer;
    assert.deepEqual(answer.response, { uid: "uid-4", allowed: true });
    const notReview = await post("/validate", JSON.stringify({ kind: "Pod" }));
    assert.equal(notReview.status, 400);
    assert.match(notReview.body, /expected kind: AdmissionReview/);
    const metrics = await (await fetch(`http://${disco.listening.monitoring}/metrics`)).text();
    for (const [series, value] of [
      ["sidecar_injection_requests_total", 2],
      ["sidecar_injection_success_total", 1],
      ["sidecar_injection_skip_total", 1],
      ["collector_validation_passed_total", 1],
      ["collector_validation_failed_total", 1],
      ["collector_validation_http_error_total", 1],
    ] as const) {
      assert.match(metrics, new RegExp(`^${series} ${value}$`, "m"), series);
    }
  });
});
