// disco-agent --stsPort on real processes: the token exchange service (RFC 8693) of a sidecar in the
// secure local mesh. The token it hands out is one the mesh accepts: mesh_ca issues a certificate for it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { requestWorkloadCertificate } from "../../host/anchor/client.ts";
import { AGENT_BIN, type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { freePort } from "./sidecar_support.ts";

const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT = "urn:ietf:params:oauth:token-type:jwt";

describe("disco-agent --stsPort: token exchange (RFC 8693) on 127.0.0.1", () => {
  let mesh: LocalMesh;
  let sts: string;
  let workloadToken: string;
  before(async () => {
    const port = await freePort();
    sts = `http://127.0.0.1:${port}`;
    mesh = await startLocalMesh({ secure: true, agentArgs: ["--stsPort", String(port)] });
    const args = mesh.sidecar.proc.spawnargs;
    workloadToken = readFileSync(args[args.indexOf("--tokenPath") + 1], "utf8").trim();
  });
  after(async () => {
    await mesh?.stop();
  });

  const exchange = (form: Record<string, string>, init: RequestInit = {}) =>
    fetch(`${sts}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
      ...init,
    });

  it("exchanges the workload's token for a token the mesh accepts: mesh_ca issues a certificate for it", async () => {
    const res = await exchange({ grant_type: GRANT, subject_token: workloadToken, subject_token_type: JWT });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    const body = (await res.json()) as { access_token: string; issued_token_type: string; token_type: string; expires_in: number };
    assert.equal(body.token_type, "Bearer");
    assert.equal(body.issued_token_type, JWT);
    assert.ok(body.expires_in > 0 && body.expires_in <= 3600 * 24, String(body.expires_in));
    const cert = await requestWorkloadCertificate({
      address: mesh.ca!.address,
      identity: "spiffe://cluster.local/ns/demo/sa/petstore",
      keyAlgorithm: "ECDSA",
      auth: { token: body.access_token, tls: { rootPem: readFileSync(mesh.ca!.rootCertFile, "utf8") } },
    });
    assert.equal(cert.identity, "spiffe://cluster.local/ns/demo/sa/petstore");
  });

  it("refuses malformed requests with 400 invalid_request, naming the parameter", async () => {
    const cases: Array<[Promise<Response>, RegExp]> = [
      [exchange({ grant_type: "password", subject_token: workloadToken, subject_token_type: JWT }), /grant_type is invalid/],
      [exchange({ grant_type: GRANT, subject_token_type: JWT }), /subject_token is empty/],
      [
        exchange({ grant_type: GRANT, subject_token: workloadToken, subject_token_type: "urn:ietf:params:oauth:token-type:saml2" }),
        /subject_token_type is invalid/,
      ],
      [exchange({ grant_type: GRANT, subject_token: "not-a-jwt", subject_token_type: JWT }), /subject_token is not a JWT/],
      [fetch(`${sts}/token`), /request method is invalid, should be POST/],
      [
        exchange({ grant_type: GRANT, subject_token: workloadToken, subject_token_type: JWT }, { headers: { "content-type": "application/json" } }),
        /content type is invalid/,
      ],
    ];
    for (const [response, why] of cases) {
      const res = await response;
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: string; error_description: string };
      assert.equal(body.error, "invalid_request");
      assert.match(body.error_description, why);
    }
  });

  it("a request with a scope (a cloud access token from the token manager plugin) is answered invalid_target, saying why", async () => {
    const res = await exchange({
      grant_type: GRANT,
      subject_token: workloadToken,
      subject_token_type: JWT,
      scope: "https://www.googleapis.com/auth/cloud-platform",
    });
    assert.equal(res.status, 500);
    const body = (await res.json()) as { error: string; error_description: string };
    assert.equal(body.error, "invalid_target");
    assert.match(body.error_description, /CloudTokenExchange token manager .* not reachable here/);
    const status = (await (await fetch(`${sts}/stsStatus`)).json()) as { plugin: string; servedLocally: number; refused: number };
    assert.equal(status.plugin, "CloudTokenExchange");
    assert.ok(status.servedLocally >= 1 && status.refused >= 7, JSON.stringify(status));
  });

  it("--tokenManagerPlugin other than CloudTokenExchange: exit 2 naming the flag", () => {
    const r = spawnSync(process.execPath, [AGENT_BIN, "proxy", "--tokenManagerPlugin", "GoogleTokenExchange"], { encoding: "utf8", timeout: 600_000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--tokenManagerPlugin/);
  });
});
