// The control plane secured end to end (issue 15 items 1 and 6), with real processes and real
// certificates: the sidecar obtains its certificate from mesh_ca with a service-account token,
// renews it over mutual TLS with the certificate alone, and talks to a hub that serves mutual TLS
// (`--controlPlaneAuthPolicy MUTUAL_TLS`), checking the hub's identity; plain text stays
// available (NONE) and says so.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { AGENT_BIN, type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type MeshCa, type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { get, sidecarConfig, stats, waitFor } from "./sidecar_support.ts";
import { tempDir } from "../support/processes.ts";

const LONG = 90_000;

describe("secure control plane: the npm start mesh (mesh_ca, hub over mutual TLS, sidecar MUTUAL_TLS)", () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startLocalMesh({ secure: true });
  });
  after(async () => {
    await mesh?.stop();
  });

  it("issues the sidecar's certificate for its token and reaches the hub over mutual TLS", async () => {
    assert.equal(mesh.hub.listening.grpcTls, true);
    assert.match(mesh.hub.output(), /gRPC is mutual TLS.*identity=spiffe:\/\/cluster.local\/ns\/mesh-system\/sa\/mesh-hub-service-account/);
    assert.match(mesh.ca!.output(), /issued certificate.*identity=spiffe:\/\/cluster.local\/ns\/demo\/sa\/petstore.*authenticatedBy=token/);
    assert.match(mesh.sidecar.output(), /control plane traffic is mutual TLS with spiffe:\/\/cluster.local\/ns\/demo\/sa\/petstore/);
    const ok = await get(`${mesh.inboundUrl}/pets/42?key=alice`);
    assert.equal(ok.status, 200, ok.body);
    const denied = await get(`${mesh.inboundUrl}/admin`);
    assert.equal(denied.status, 403, "the hub's deny rule answered over mutual TLS");
    assert.match(denied.body, /admins only/);
    const s = await stats(mesh.adminUrl);
    assert.equal(s.get("hub_transport.failed_attempts"), 0);
    // Reports travel the same channel: the hub writes them to its access log.
    await waitFor(
      "the report in the hub's access log",
      () => {
        try {
          return readFileSync(mesh.accessLog, "utf8").includes("/pets/42") ? true : undefined;
        } catch {
          return undefined;
        }
      },
      LONG,
    );
  });
});

describe("secure control plane: the hub's identity is checked", () => {
  let mesh: LocalMesh;
  before(async () => {
    // The hub is mesh-hub-service-account; this sidecar insists on another identity, and fails closed.
    mesh = await startLocalMesh({ secure: true, sidecarConfig: sidecarConfig("FAIL_CLOSE"), agentArgs: ["--hubIdentity", "sa/some-other-hub"] });
  });
  after(async () => {
    await mesh?.stop();
  });

  it("a hub proving another identity gets no request: the call fails and FAIL_CLOSE answers 503", async () => {
    const res = await get(`${mesh.inboundUrl}/pets/1`);
    assert.equal(res.status, 503, res.body);
    assert.match(res.body, /UNAVAILABLE/);
    assert.ok((await stats(mesh.adminUrl)).get("hub_transport.failed_calls")! >= 1);
  });
});

describe("secure control plane: workload certificate renewal over mutual TLS", () => {
  let ca: MeshCa;
  let w: SecureWorkload;
  before(async () => {
    // 20 s certificates (the agent asks for SECRET_TTL) renewed at half-life: two renewals within the test.
    ca = await startMeshCa(["--workload-cert-ttl", "20s"], { ANCHOR_WORKLOAD_CERT_MIN_GRACE_PERIOD: "0s" });
    w = await startSecureWorkload({ ca, name: "sleep", namespace: "foo", configDir: tempDir("mesh-cp-renew-"), env: { SECRET_TTL: "20s" } });
  });
  after(async () => {
    await w?.stop();
    await ca?.stop();
  });

  it("renews with the current certificate and no token (the token file is gone)", async () => {
    const args = w.sidecar.proc.spawnargs;
    const tokenPath = args[args.indexOf("--tokenPath") + 1];
    rmSync(tokenPath);
    const dump = await waitFor(
      "two renewals",
      async () => {
        const d = JSON.parse((await get(`${w.adminUrl}/config_dump`)).body) as {
          secrets: { rotations: number; lastAuthenticatedBy: string; controlPlaneAuthPolicy: string };
        };
        return d.secrets.rotations >= 3 ? d : undefined;
      },
      LONG,
    );
    assert.equal(dump.secrets.controlPlaneAuthPolicy, "MUTUAL_TLS");
    assert.equal(dump.secrets.lastAuthenticatedBy, "certificate");
    assert.ok((ca.output().match(/identity=spiffe:\/\/cluster.local\/ns\/foo\/sa\/sleep.*authenticatedBy=certificate/g) ?? []).length >= 2, ca.output());
    const res = await get(`http://127.0.0.1:${w.inbound}/`);
    assert.equal(res.status, 200, "still serving with the renewed certificate");
  });
});

describe("secure control plane: start-up refusals and plain text", () => {
  let ca: MeshCa;
  before(async () => {
    ca = await startMeshCa();
  });
  after(async () => {
    await ca?.stop();
  });

  const agent = (args: string[]) =>
    spawnSync(
      process.execPath,
      [AGENT_BIN, "proxy", "--configDir", tempDir("mesh-cp-"), "--proxyAdminPort", "0", "--inboundPort", "0", "--outboundPort", "0", ...args],
      {
        encoding: "utf8",
        timeout: 120_000,
        env: { ...process.env, POD_NAME: "sleep", POD_NAMESPACE: "foo" },
      },
    );

  it("a sidecar without a token, or with another service account's token, gets no certificate and exits 1", async () => {
    const common = ["--caAddress", ca.address, "--caRootCert", ca.rootCertFile, "--controlPlaneAuthPolicy", "MUTUAL_TLS", "--serviceAccount", "sleep"];
    const missing = agent([...common, "--tokenPath", "/nonexistent/token"]);
    assert.equal(missing.status, 1, missing.stdout + missing.stderr);
    assert.match(missing.stdout + missing.stderr, /service-account token \/nonexistent\/token: no such file/);
    const stolen = agent([...common, "--tokenPath", await ca.tokenFile("foo", "admin")]);
    assert.equal(stolen.status, 1, stolen.stdout + stolen.stderr);
    assert.match(stolen.stdout + stolen.stderr, /the token of system:serviceaccount:foo:admin may not ask for spiffe:\/\/cluster.local\/ns\/foo\/sa\/sleep/);
  });

  it("MUTUAL_TLS needs --caAddress; a bad policy is refused", () => {
    const r = agent(["--controlPlaneAuthPolicy", "MUTUAL_TLS"]);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, /--controlPlaneAuthPolicy MUTUAL_TLS needs --caAddress/);
    const bad = agent(["--controlPlaneAuthPolicy", "SOMETIMES"]);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stdout + bad.stderr, /--controlPlaneAuthPolicy <policy>' argument 'SOMETIMES' is invalid. Allowed choices are NONE, MUTUAL_TLS/);
  });

  it("NONE against a plain-text mesh_ca: the token on every request, logged as plain text", async () => {
    const plain = await startMeshCa(["--grpc-plaintext"]);
    let w: SecureWorkload | undefined;
    try {
      w = await startSecureWorkload({ ca: plain, name: "sleep", namespace: "foo", configDir: tempDir("mesh-cp-plain-") });
      assert.match(w.sidecar.output(), /control plane traffic is plain text \(--controlPlaneAuthPolicy NONE\)/);
      assert.match(plain.output(), /authenticatedBy=token/);
      assert.equal((await get(`http://127.0.0.1:${w.inbound}/`)).status, 200);
    } finally {
      await w?.stop();
      await plain.stop();
    }
  });
});
