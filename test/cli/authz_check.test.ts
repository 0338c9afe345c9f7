import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { LocalMesh } from "../../host/demo/local_mesh.ts";
import { meshctl, tempFile } from "./cli_golden_support.ts";
import { SIDECAR_POLICIES, meshctlAsync, startPolicyMesh } from "./sidecar_cli_support.ts";

// `meshctl experimental authz check`: which AuthorizationPolicy and
// RequestAuthentication resources select a workload (security.md §4.1, §5.1).

const POD = `apiVersion: v1
kind: Pod
metadata: {name: httpbin-1, namespace: foo, labels: {app: httpbin, version: v1}}
spec: {containers: [{name: app}]}
`;

const ap = (name: string, ns: string, body: string) =>
  `---\napiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: ${body}\n`;
const ra = (name: string, ns: string, body: string) =>
  `---\napiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: ${body}\n`;

const POLICIES =
  POD +
  ap(
    "allow-get",
    "foo",
    "{selector: {matchLabels: {app: httpbin}}, action: ALLOW, rules: [{to: [{operation: {methods: [GET], paths: ['/status/*']}}], when: [{key: 'request.auth.claims[groups]', values: [admins]}]}]}",
  ) +
  ap("deny-ns", "foo", "{action: DENY, rules: [{from: [{source: {notNamespaces: [foo], ipBlocks: [10.0.0.0/8]}}]}]}") +
  ap("mesh-deny", "mesh-system", "{action: DENY, rules: [{from: [{source: {notRequestPrincipals: ['*']}}], to: [{operation: {paths: ['/admin*']}}]}]}") +
  ap("mesh-selected", "mesh-system", "{selector: {matchLabels: {version: v1}}, rules: [{}]}") +
  ap("other-workload", "foo", "{selector: {matchLabels: {app: reviews}}, action: DENY, rules: [{}]}") +
  ap("other-namespace", "bar", "{action: DENY, rules: [{}]}") +
  ra(
    "jwt",
    "foo",
    "{selector: {matchLabels: {app: httpbin}}, jwtRules: [{issuer: testing@secure.mesh.io, jwksUri: 'https://example.com/jwks.json', audiences: [httpbin], fromHeaders: [{name: x-jwt, prefix: 'Bearer '}]}]}",
  ) +
  ra("mesh-jwt", "mesh-system", "{jwtRules: [{issuer: issuer-2, jwksUri: 'https://example.com/2.json'}]}") +
  ra("other", "foo", "{selector: {matchLabels: {app: reviews}}, jwtRules: [{issuer: nope}]}");

describe("experimental authz check against files", async () => {
  test("selects by namespace, root namespace and selector; DENY before ALLOW", async () => {
    const run = await meshctl(["x", "authz", "check", "httpbin-1.foo", "-f", tempFile(POLICIES), "-o", "json"]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, "");
    const r = JSON.parse(run.stdout);
    assert.deepEqual(
      r.authorizationPolicies.map((p: { action: string; name: string; namespace: string; scope: string }) => [p.action, `${p.name}.${p.namespace}`, p.scope]),
      [
        ["DENY", "deny-ns.foo", "namespace"],
        ["DENY", "mesh-deny.mesh-system", "mesh"],
        ["ALLOW", "allow-get.foo", "workload"],
        ["ALLOW", "mesh-selected.mesh-system", "mesh-selector"],
      ],
    );
    assert.deepEqual(
      r.requestAuthentications.map((a: { name: string; scope: string }) => [a.name, a.scope]),
      [
        ["jwt", "workload"],
        ["mesh-jwt", "mesh"],
      ],
    );
    assert.deepEqual(r.workload, { pod: "httpbin-1", namespace: "foo", labels: { app: "httpbin", version: "v1" }, from: "Pod foo/httpbin-1" });
  });

  test("the table lists policies and rule counts; -a shows every rule and the JWT rules", async () => {
    const file = tempFile(POLICIES);
    const short = await meshctl(["experimental", "authz", "check", "httpbin-1", "-n", "foo", "-f", file]);
    assert.equal(short.status, 0, short.stderr);
    assert.equal(
      short.stdout,
      [
        "Workload httpbin-1.foo (labels app=httpbin,version=v1; Pod foo/httpbin-1)",
        "",
        "ACTION   AuthorizationPolicy         SCOPE                      RULES",
        "DENY     deny-ns.foo                 namespace                  1",
        "DENY     mesh-deny.mesh-system       mesh                       1",
        "ALLOW    allow-get.foo               workload app=httpbin       1",
        "ALLOW    mesh-selected.mesh-system   mesh-selector version=v1   1",
        "",
        "RequestAuthentication   SCOPE                  JWT RULES",
        "jwt.foo                 workload app=httpbin   1",
        "mesh-jwt.mesh-system    mesh                   1",
        "",
        "JWT: tokens from testing@secure.mesh.io, issuer-2 are validated; an invalid token is rejected (401), a request without a token goes on without a request principal",
        "DENY: 2 policies are checked first; a request matching any rule is denied (403)",
        "ALLOW: a request not denied must match a rule of one of 2 ALLOW policies, else it is denied (403)",
        "",
      ].join("\n"),
    );
    const all = await meshctl(["x", "authz", "check", "httpbin-1.foo", "-f", file, "-a"]);
    assert.equal(all.status, 0, all.stderr);
    for (const line of [
      "DENY deny-ns.foo:",
      '    from[0].source: notNamespaces=["foo"] ipBlocks=["10.0.0.0/8"]',
      '    from[0].source: notRequestPrincipals=["*"]',
      '    to[0].operation: paths=["/admin*"]',
      '    to[0].operation: methods=["GET"] paths=["/status/*"]',
      '    when[0]: request.auth.claims[groups] values=["admins"]',
      "  rule[0]: (empty: matches every request)",
      "RequestAuthentication jwt.foo:",
      "  jwtRules[0]: issuer testing@secure.mesh.io",
      "    jwksUri: https://example.com/jwks.json",
      '    audiences: ["httpbin"]',
      '    token from: header x-jwt prefix "Bearer "',
      'token from: header Authorization prefix "Bearer ", query access_token (defaults)',
    ]) {
      assert.ok(all.stdout.includes(line), `missing ${JSON.stringify(line)} in:\n${all.stdout}`);
    }
  });

  test("nothing applies: every request is allowed", async () => {
    const run = await meshctl(["x", "authz", "check", "httpbin-1.foo", "-f", tempFile(POD + ap("x", "bar", "{action: DENY, rules: [{}]}"))]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /No AuthorizationPolicy applies\.\n\nNo RequestAuthentication applies\.\n\nJWT: no RequestAuthentication applies: no request has a request principal\nALLOW: no ALLOW policy applies: a request no DENY rule matches is allowed\n$/,
    );
  });

  test("errors: unknown pod (1), no source (1), a pod is required with resource files (2); `meshctl authz` points to experimental (2)", async () => {
    const unknown = await meshctl(["x", "authz", "check", "nope.foo", "-f", tempFile(POD)]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /pod nope\.foo not found/);
    const none = await meshctl(["x", "authz", "check", "httpbin-1.foo"]);
    assert.equal(none.status, 69);
    assert.match(none.stderr, /needs an orchestrator API.*`-f config_dump\.json` or `--admin URL`/);
    const nopod = await meshctl(["x", "authz", "check", "-f", tempFile(POD)]);
    assert.equal(nopod.status, 2);
    const moved = await meshctl(["authz", "check", "httpbin-1"]);
    assert.equal(moved.status, 2);
    assert.match(moved.stderr, /use `meshctl experimental authz check <pod> -f config_dump\.json`/);
  });
});

describe("experimental authz check against a running sidecar and its config dump", async () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startPolicyMesh();
  });
  after(async () => {
    await mesh?.stop();
  });

  test("--admin: the policies selecting the sidecar's workload, not the others", async () => {
    const run = await meshctlAsync(["x", "authz", "check", "--admin", mesh.adminUrl, "-o", "json"]);
    assert.equal(run.status, 0, run.stderr);
    const r = JSON.parse(run.stdout);
    assert.deepEqual(
      r.authorizationPolicies.map((p: { name: string; action: string }) => `${p.action} ${p.name}`),
      ["DENY require-jwt-admin"],
    );
    assert.deepEqual(r.authorizationPolicies[0].rules, [{ from: [{ notRequestPrincipals: ["*"] }], to: [{ paths: ["/admin*"] }], when: [] }]);
    assert.deepEqual(
      r.requestAuthentications.map((a: { name: string }) => a.name),
      ["jwt"],
    );
    // This sidecar runs without --caAddress: the note says so (with the security path there is no such note).
    assert.ok(r.notes.includes("the sidecar runs without --caAddress (no security path): it shows these policies but does not enforce them"));
  });

  test("-f config_dump.json saved from the admin port, with the pod named", async () => {
    const dump = await (await fetch(`${mesh.adminUrl}/config_dump`)).text();
    const file = join(tempFile("", "x.txt"), "..", "config_dump.json");
    writeFileSync(file, dump);
    const run = await meshctlAsync(["x", "authz", "check", "petstore-v1.demo", "-f", file, "-a"]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^Workload petstore-v1\.demo \(labels app=petstore,version=v1; Pod demo\/petstore-v1\)\n/);
    assert.match(run.stdout, /DENY\s+require-jwt-admin\.demo\s+workload app=petstore\s+1\n/);
    assert.ok(run.stdout.includes('    from[0].source: notRequestPrincipals=["*"]\n    to[0].operation: paths=["/admin*"]\n'), run.stdout);
    assert.ok(run.stdout.includes("  jwtRules[0]: issuer testing@secure.mesh.io\n    jwksUri: https://example.com/jwks.json\n"), run.stdout);
    const wrong = await meshctlAsync(["x", "authz", "check", "reviews-v1.demo", "-f", file]);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /pod reviews-v1\.demo not found in config dump/);
  });
  test("a dump of a sidecar that enforces its policies carries no 'not enforced' note", async () => {
    const dump = JSON.parse(await (await fetch(`${mesh.adminUrl}/config_dump`)).text()) as { configuration: { enforced: boolean } };
    dump.configuration.enforced = true;
    const file = join(tempFile("", "x.txt"), "..", "config_dump.json");
    writeFileSync(file, JSON.stringify(dump));
    const run = await meshctlAsync(["x", "authz", "check", "petstore-v1.demo", "-f", file]);
    assert.equal(run.status, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /enforce/);
  });
});

describe("experimental authz check -f a -f b", async () => {
  test("reads every file given (workload in one, policies in the other)", async () => {
    const [pod, policies] = SIDECAR_POLICIES.split("---\napiVersion: v1\nkind: Service");
    const a = tempFile(pod, "pod.yaml");
    const b = tempFile(`apiVersion: v1\nkind: Service${policies}`, "policies.yaml");
    for (const args of [
      ["-f", a, "-f", b],
      ["-f", `${a},${b}`],
    ]) {
      const run = await meshctl(["x", "authz", "check", "petstore-v1.demo", ...args, "-o", "json"]);
      assert.equal(run.status, 0, run.stderr);
      const r = JSON.parse(run.stdout) as { workload: { from: string }; authorizationPolicies: Array<{ name: string }> };
      assert.equal(r.workload.from, "Pod demo/petstore-v1");
      assert.deepEqual(
        r.authorizationPolicies.map((p) => p.name),
        ["require-jwt-admin"],
      );
    }
  });
});
