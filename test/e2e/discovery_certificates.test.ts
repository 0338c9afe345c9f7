// Joining the mesh through the control plane, real processes on loopback: mesh_ca (trusting
// disco-discovery as a registration authority), disco-discovery with its mesh_ca certificate
// relaying CreateCertificate on --secureGrpcAddr (--caAddress), and a sidecar started with only
// --discoveryAddress, a token and the mounted root: it gets its workload certificate through
// disco-discovery, its configuration over mutual TLS, enforces the AuthorizationPolicies of
// disco-discovery's folder, and renews by certificate (relayed as ImpersonatedIdentity).
// A bad token is refused (UNAUTHENTICATED) and the agent exits 1 naming the control plane.
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { requestWorkloadCertificate } from "../../host/anchor/client.ts";
import { AGENT_BIN, DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { startEchoApp } from "../../host/demo/echo_app.ts";
import { type MeshCa, startMeshCa, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { type Daemon, runProcess, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { get } from "./sidecar_support.ts";

interface Listening {
  secureGrpc: string;
  http: string;
  monitoring: string;
}
interface AgentListening {
  inbound: number;
  admin: number;
}

const LONG = 120_000;

const policy = (name: string, spec: string) => `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: ${name}, namespace: foo}
spec: ${spec}
`;

describe("a sidecar joins the mesh with only --discoveryAddress and a token: disco-discovery relays its certificate requests to mesh_ca", () => {
  let ca: MeshCa;
  let disco: Daemon<Listening>;
  let agent: Daemon<AgentListening>;
  let app: Awaited<ReturnType<typeof startEchoApp>>;
  const configDir = tempDir("disco-certs-config-");
  const certDir = tempDir("disco-certs-own-");
  const agentEnv = { ...process.env, POD_NAME: "sleep-1", POD_NAMESPACE: "foo", SECRET_TTL: "20s" };

  before(async () => {
    // The agent asks for 20 s certificates (SECRET_TTL), renewed at half-life: renewals within the test, relayed by certificate.
    ca = await startMeshCa(["--trusted-node-accounts", "mesh-system/disco-discovery"], {
      ANCHOR_WORKLOAD_CERT_MIN_GRACE_PERIOD: "0s",
    });
    await writeWorkloadCertFiles(ca, "mesh-system", "disco-discovery", certDir);
    writeFileSync(join(configDir, "authz.yaml"), policy("allow-nothing", "{}"));
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
        "--caAddress",
        ca.address,
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "127.0.0.1:0",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, DISCO_CERT_DIR: certDir, DISCO_DEBOUNCE_AFTER: "10ms" },
    );
    app = await startEchoApp();
    agent = await startDaemon<AgentListening>(
      AGENT_BIN,
      [
        "proxy",
        "--inboundPort",
        "0",
        "--outboundPort",
        "0",
        "--proxyAdminPort",
        "0",
        "--appPort",
        String(app.port),
        "--discoveryAddress",
        disco.listening.secureGrpc,
        "--tokenPath",
        await ca.tokenFile("foo", "sleep"),
        "--caRootCert",
        ca.rootCertFile,
        "--serviceAccount",
        "sleep",
        "--workloadKeyAlgorithm",
        "ECDSA",
      ],
      "disco-agent listening ",
      undefined,
      agentEnv,
    );
  });
  after(async () => {
    await agent?.stop();
    app?.server.closeAllConnections();
    app?.server.close();
    await disco?.stop();
    await ca?.stop();
  });

  const dump = async () =>
    JSON.parse((await get(`http://127.0.0.1:${agent.listening.admin}/config_dump`)).body) as {
      secrets: {
        certificates: Array<{ name: string; identity?: string; subjectAltName: string }>;
        caAddress: string;
        controlPlaneAuthPolicy: string;
        rotations: number;
        lastAuthenticatedBy: string;
      };
    };

  it("the workload certificate names the SPIFFE identity of its token, obtained from disco-discovery over TLS", async () => {
    const d = await dump();
    const leaf = d.secrets.certificates.find((c) => c.name === "default")!;
    assert.equal(leaf.identity, "spiffe://cluster.local/ns/foo/sa/sleep");
    assert.match(leaf.subjectAltName, /URI:spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep/);
    assert.equal(d.secrets.caAddress, disco.listening.secureGrpc, "the CA address defaults to --discoveryAddress");
    assert.equal(d.secrets.controlPlaneAuthPolicy, "MUTUAL_TLS");
    assert.match(
      agent.output(),
      new RegExp(`workload certificate for spiffe://cluster.local/ns/foo/sa/sleep from disco-discovery ${disco.listening.secureGrpc}`),
    );
    assert.match(disco.output(), /certificate relayed from mesh_ca .* \(authenticated by token\)/);
  });

  it("its configuration comes over mutual TLS: the allow-nothing policy is enforced (403), then an allowing one after a change in disco-discovery's folder", async () => {
    const denied = await get(`http://127.0.0.1:${agent.listening.inbound}/headers`);
    assert.equal(denied.status, 403, denied.body);
    assert.equal(denied.body, "RBAC: access denied");
    const sync = JSON.parse((await get(`http://${disco.listening.http}/debug/syncz`)).body) as Array<{ proxy: string; acked: string | null }>;
    assert.ok(
      sync.some((r) => r.proxy.includes("sleep-1.foo") && r.acked),
      JSON.stringify(sync),
    );
    writeFileSync(join(configDir, "authz.yaml"), policy("allow-all", "{rules: [{}]}"));
    const allowed = await waitFor(
      "the allowing policy applied",
      async () => {
        const r = await get(`http://127.0.0.1:${agent.listening.inbound}/headers`);
        return r.status === 200 ? r : undefined;
      },
      LONG,
    );
    assert.equal(allowed.status, 200);
  });

  it("renews with its certificate alone: disco-discovery asks mesh_ca on its behalf (ImpersonatedIdentity)", async () => {
    const args = agent.proc.spawnargs;
    rmSync(args[args.indexOf("--tokenPath") + 1]);
    const d = await waitFor(
      "two renewals",
      async () => {
        const x = await dump();
        return x.secrets.rotations >= 3 ? x : undefined;
      },
      LONG,
    );
    assert.equal(d.secrets.lastAuthenticatedBy, "certificate");
    assert.match(disco.output(), /\(authenticated by certificate spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep\)/);
    assert.match(ca.output(), /identity=spiffe:\/\/cluster.local\/ns\/foo\/sa\/sleep.*authenticatedBy=registration-authority/);
  });

  it("counts the relayed requests with spec 2's authority counters", async () => {
    const metrics = await (await fetch(`http://${disco.listening.monitoring}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(metrics)?.[1] ?? Number.NaN);
    assert.ok(value("anchor_server_csr_count_total") >= 3, metrics);
    assert.ok(value("anchor_server_success_cert_issuance_count_total") >= 3, metrics);
    assert.ok(value("anchor_server_root_cert_expiry_timestamp") > Date.now() / 1000, "the mesh root's expiry");
  });

  it("a caller with a bad token is refused UNAUTHENTICATED; a caller without a certificate gets no xDS stream", async () => {
    const roots = readFileSync(ca.rootCertFile, "utf8");
    const before = await (await fetch(`http://${disco.listening.monitoring}/metrics`)).text();
    const failures = (text: string) => Number(/^anchor_server_authentication_failure_count_total (\S+)$/m.exec(text)?.[1] ?? "NaN");
    const refused = await requestWorkloadCertificate({
      address: disco.listening.secureGrpc,
      identity: "spiffe://cluster.local/ns/foo/sa/sleep",
      keyAlgorithm: "ECDSA",
      timeoutMs: 60_000,
      auth: { token: "not.a.token", tls: { rootPem: roots, checkServerIdentity: () => undefined } },
    }).then(
      () => undefined,
      (e: { code: number; details: string }) => e,
    );
    assert.ok(refused, "the request must fail");
    assert.equal(refused.code, grpc.status.UNAUTHENTICATED, refused.details);
    const after = await (await fetch(`http://${disco.listening.monitoring}/metrics`)).text();
    assert.equal(failures(after), failures(before) + 1);
    // ADS without a client certificate: the handshake lets it in (a token caller needs that), the stream is refused.
    const client = new grpc.Client(
      disco.listening.secureGrpc,
      grpc.credentials.createSsl(Buffer.from(roots), null, null, { checkServerIdentity: () => undefined }),
    );
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
  });

  it("an agent whose token is refused exits 1 within --connectTimeout, naming the control plane and the reason", async () => {
    const badToken = join(tempDir("disco-certs-token-"), "token");
    writeFileSync(badToken, "not.a.token");
    const started = performance.now();
    const r = await runProcess(
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
        disco.listening.secureGrpc,
        "--tokenPath",
        badToken,
        "--caRootCert",
        ca.rootCertFile,
        "--serviceAccount",
        "sleep",
        "--workloadKeyAlgorithm",
        "ECDSA",
        "--connectTimeout",
        "20s",
      ],
      { env: agentEnv },
    );
    const output = r.stdout + r.stderr;
    assert.equal(r.status, 1, output);
    assert.ok(performance.now() - started < 120_000, "bounded by --connectTimeout, with a loaded machine's margin");
    // 16 = UNAUTHENTICATED, mesh_ca's verdict on the token relayed by disco-discovery.
    assert.match(
      output,
      new RegExp(
        `--discoveryAddress ${disco.listening.secureGrpc}: no workload certificate from the control plane: CreateCertificate failed \\(gRPC status 16\\): mesh_ca 127\\.0\\.0\\.1:\\d+: `,
      ),
    );
    assert.doesNotMatch(output, /disco-agent listening/);
  });

  it("--controlPlaneAuthPolicy NONE with the control plane as the CA is refused (exit 2): it serves certificates only over TLS", async () => {
    const r = await runProcess(
      process.execPath,
      [AGENT_BIN, "proxy", "--proxyAdminPort", "0", "--inboundPort", "0", "--outboundPort", "0", "--discoveryAddress", disco.listening.secureGrpc],
      { env: { ...agentEnv, CA_ADDR: disco.listening.secureGrpc } },
    );
    // Without the flag: MUTUAL_TLS by default, and the root at upstream's mount, absent here → exit 1 naming the file.
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, /--caRootCert \/var\/run\/secrets\/mesh\/root-cert\.pem: ENOENT/);
    const none = await runProcess(
      process.execPath,
      [
        AGENT_BIN,
        "proxy",
        "--proxyAdminPort",
        "0",
        "--inboundPort",
        "0",
        "--outboundPort",
        "0",
        "--discoveryAddress",
        disco.listening.secureGrpc,
        "--controlPlaneAuthPolicy",
        "NONE",
      ],
      { env: { ...agentEnv, CA_ADDR: disco.listening.secureGrpc } },
    );
    assert.equal(none.status, 2, none.stdout + none.stderr);
    assert.match(none.stdout + none.stderr, /--controlPlaneAuthPolicy NONE: the CA is disco-discovery .* serves certificates only over TLS/);
  });
});
