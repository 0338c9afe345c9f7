import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import type { PathNormalization } from "../../host/security/authz/path.ts";
import { stats } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// Issue 15 item 2: no request form reaches the app on a path a DENY covers.
// One sidecar per mesh `pathNormalization` mode, each in front of its own
// echo app, under one AuthorizationPolicy that denies `/admin*`. Every row
// is written on a raw socket (so odd request lines go out exactly as
// written) and lists, per mode, the sidecar's answer and the path the app
// received. Whatever the row, a path the DENY covers never reaches an app.

const POLICY = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: foo}
spec:
  action: DENY
  rules:
  - to: [{operation: {paths: ["/admin*"]}}]
`;
const HOST = "httpbin.foo:8000";
const MODES = ["NONE", "BASE", "MERGE_SLASHES", "DECODE_AND_MERGE_SLASHES"] as const;
const deniedByPolicy = (path: string) => path.startsWith("/admin");

/** "403", "400", "closed" (no HTTP status), or "200 <path the app received>". */
type Outcome = string;
type Row = { name: string; request: string; expect: Record<PathNormalization, Outcome> };
const all = (o: Outcome): Record<PathNormalization, Outcome> => ({ NONE: o, BASE: o, MERGE_SLASHES: o, DECODE_AND_MERGE_SLASHES: o });
const normalizedOnly = (none: Outcome, others: Outcome): Record<PathNormalization, Outcome> => ({
  NONE: none,
  BASE: others,
  MERGE_SLASHES: others,
  DECODE_AND_MERGE_SLASHES: others,
});
const get = (target: string, host: string | null = HOST, method = "GET", version = "HTTP/1.1") =>
  `${method} ${target} ${version}\r\n${host === null ? "" : `Host: ${host}\r\n`}Connection: close\r\n\r\n`;

const rows: Row[] = [
  { name: "origin form, denied path", request: get("/admin"), expect: all("403") },
  { name: "origin form, allowed path", request: get("/public"), expect: all("200 /public") },
  { name: "absolute form, denied path", request: get(`http://${HOST}/admin`), expect: all("403") },
  { name: "absolute form, allowed path: the app gets origin form", request: get(`http://${HOST}/public?q=1`), expect: all("200 /public?q=1") },
  { name: "absolute form, scheme and host in upper case", request: get("HTTP://HTTPBIN.FOO:8000/admin"), expect: all("403") },
  { name: "absolute form, default port left out of the target", request: get("http://httpbin.foo/admin", "httpbin.foo:80"), expect: all("403") },
  { name: "absolute form, foreign authority", request: get("http://evil.example/admin"), expect: all("400") },
  { name: "absolute form, foreign authority on an allowed path", request: get("http://evil.example/public"), expect: all("400") },
  { name: "absolute form, another port", request: get("http://httpbin.foo:9999/public"), expect: all("400") },
  { name: "absolute form with userinfo", request: get(`http://user@${HOST}/public`), expect: all("400") },
  { name: "absolute form over HTTP/1.0 without Host", request: get(`http://${HOST}/admin`, null, "GET", "HTTP/1.0"), expect: all("403") },
  { name: "asterisk form with GET", request: get("*"), expect: all("400") },
  { name: "asterisk form with OPTIONS", request: get("*", HOST, "OPTIONS"), expect: all("200 *") },
  { name: "authority form (CONNECT)", request: get(HOST, HOST, "CONNECT"), expect: all("closed") },
  { name: "dot segments", request: get("/public/../admin"), expect: normalizedOnly("200 /public/../admin", "403") },
  { name: "encoded dot segments", request: get("/public/%2e%2E/admin"), expect: normalizedOnly("200 /public/%2e%2E/admin", "403") },
  { name: "escapes that decode into escapes", request: get("/public/%%32%65%%32%65/admin"), expect: normalizedOnly("200 /public/%%32%65%%32%65/admin", "403") },
  { name: "encoded unreserved letter", request: get("/%61dmin"), expect: normalizedOnly("200 /%61dmin", "403") },
  { name: "backslashes", request: get("/public\\..\\admin"), expect: normalizedOnly("200 /public\\..\\admin", "403") },
  {
    name: "repeated slashes",
    request: get("//admin"),
    expect: { NONE: "200 //admin", BASE: "200 //admin", MERGE_SLASHES: "403", DECODE_AND_MERGE_SLASHES: "403" },
  },
  {
    name: "repeated slashes before a dot segment (the dot segment removes the empty one)",
    request: get("/public//../admin"),
    expect: normalizedOnly("200 /public//../admin", "200 /public/admin"),
  },
  { name: "repeated slashes, then two dot segments", request: get("/public//../../admin"), expect: normalizedOnly("200 /public//../../admin", "403") },
  {
    name: "encoded slash",
    request: get("/%2Fadmin"),
    expect: { NONE: "200 /%2Fadmin", BASE: "200 /%2Fadmin", MERGE_SLASHES: "200 /%2Fadmin", DECODE_AND_MERGE_SLASHES: "403" },
  },
  {
    name: "encoded slashes around a dot segment",
    request: get("/public%2f..%2fadmin"),
    expect: { NONE: "200 /public%2f..%2fadmin", BASE: "200 /public%2f..%2fadmin", MERGE_SLASHES: "200 /public%2f..%2fadmin", DECODE_AND_MERGE_SLASHES: "403" },
  },
  {
    name: "encoded backslash",
    request: get("/public%5C..%5Cadmin"),
    expect: { NONE: "200 /public%5C..%5Cadmin", BASE: "200 /public%5C..%5Cadmin", MERGE_SLASHES: "200 /public%5C..%5Cadmin", DECODE_AND_MERGE_SLASHES: "403" },
  },
  { name: "double-encoded dot segment (left alone, as upstream)", request: get("/public/%252e%252e/admin"), expect: all("200 /public/%252e%252e/admin") },
  { name: "upper-case path (paths are case-sensitive)", request: get("/ADMIN"), expect: all("200 /ADMIN") },
  { name: "query holding the denied path", request: get("/public?next=/admin"), expect: all("200 /public?next=/admin") },
  { name: "fragment holding a dot segment", request: get("/public#/../../admin"), expect: all("200 /public") },
  { name: "encoded NUL", request: get("/admin%00"), expect: normalizedOnly("403", "400") },
  { name: "encoded NUL appearing after decoding", request: get("/public%%30%30"), expect: normalizedOnly("200 /public%%30%30", "400") },
];

/** Writes `request` on a fresh connection and reads until the sidecar closes it. */
function raw(port: number, request: string): Promise<{ status: number | "closed"; body: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(Buffer.from(request, "latin1")));
    let data = "";
    const deadline = setTimeout(() => socket.destroy(new Error("no answer within 60 s")), 60_000);
    socket.setEncoding("latin1");
    socket.on("data", (c: string) => (data += c));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(deadline);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(data);
      resolve({ status: m ? Number(m[1]) : "closed", body: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
  });
}

describe("request forms against a DENY under every pathNormalization (issue 15)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-request-forms-");
  const configDir = join(dir, "config");
  let ca: Awaited<ReturnType<typeof startMeshCa>> | undefined;
  const sidecars = new Map<PathNormalization, SecureWorkload>();

  before(async () => {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(configDir);
    writeFileSync(join(configDir, "policy.yaml"), POLICY);
    ca = await startMeshCa();
    // One after the other: four sidecars starting at once on a busy machine only slow each other down.
    for (const mode of MODES) {
      const meshConfigFile = join(dir, `mesh-${mode}.yaml`);
      writeFileSync(meshConfigFile, `pathNormalization: {normalization: ${mode}}\n`);
      sidecars.set(mode, await startSecureWorkload({ name: "httpbin", namespace: "foo", configDir, ca, meshConfigFile }));
    }
  });
  after(async () => {
    await Promise.all([...sidecars.values()].map((w) => w.stop()));
    await ca?.stop();
  });

  for (const row of rows) {
    it(`${row.name}: ${JSON.stringify(row.request.split("\r\n")[0])}`, async () => {
      const got: Record<string, Outcome> = {};
      for (const mode of MODES) {
        const w = sidecars.get(mode)!;
        w.app.seen.length = 0;
        const res = await raw(w.inbound, row.request);
        const seen = w.app.seen.map((s) => s.path);
        assert.ok(seen.length <= 1, `${mode}: the app saw ${seen.length} requests`);
        for (const path of seen) assert.ok(!deniedByPolicy(path), `${mode}: the app received ${path}, which the DENY covers`);
        if (res.status === 200) got[mode] = `200 ${seen[0] ?? "(app not reached)"}`;
        else {
          assert.equal(seen.length, 0, `${mode}: answered ${res.status} but the app saw ${seen[0]}`);
          got[mode] = String(res.status);
          if (res.status === 403) assert.equal(res.body, "RBAC: access denied");
        }
      }
      assert.deepEqual(got, row.expect);
    });
  }

  it("refusals at the edge are counted per reason", async () => {
    const s = await stats(sidecars.get("BASE")!.adminUrl);
    assert.ok((s.get("listener.inbound.rejected_targets.authority_mismatch") ?? 0) >= 3);
    assert.ok((s.get("listener.inbound.rejected_targets.asterisk_form") ?? 0) >= 1);
    assert.ok((s.get("listener.inbound.rejected_targets.invalid_target") ?? 0) >= 1);
    assert.ok((s.get("listener.inbound.rejected_targets.invalid_path") ?? 0) >= 2);
  });
});
