import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { LocalMesh } from "../../host/demo/local_mesh.ts";
import { stats, waitFor } from "../e2e/sidecar_support.ts";
import { Writable } from "node:stream";
import { DEFAULT_MESH_NAMESPACE } from "../../host/cli/meshctl/global_flags.ts";
import { loadView } from "../../host/cli/meshctl/mesh_view.ts";
import { tlsCheck, tlsCheckJson } from "../../host/cli/meshctl/tls_check.ts";
import { meshctl, tempFile } from "./cli_golden_support.ts";
import { meshctlAsync, startPolicyMesh } from "./sidecar_cli_support.ts";

// `meshctl authn tls-check`: spec 1 rules 3–7 (PeerAuthentication precedence,
// port-level settings, DestinationRules), security.md §1–2.

const WORKLOAD = `apiVersion: v1
kind: Pod
metadata: {name: httpbin-1, namespace: foo, labels: {app: httpbin}}
spec:
  containers: [{name: app, ports: [{name: http, containerPort: 8080}, {name: admin, containerPort: 9000}]}]
---
apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: foo}
spec:
  selector: {app: httpbin}
  ports: [{name: http, port: 8000, targetPort: http}, {name: admin, port: 9001, targetPort: 9000}]
`;

const pa = (name: string, ns: string, body: string) =>
  `---\napiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: ${body}\n`;
const dr = (name: string, ns: string, host: string, trafficPolicy: string) =>
  `---\napiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: {name: ${name}, namespace: ${ns}}\nspec:\n  host: ${host}\n  trafficPolicy: ${trafficPolicy}\n`;
const HOST = "httpbin.foo.svc.cluster.local";
const SELECT = "selector: {matchLabels: {app: httpbin}}";

/** Expected columns for one service port: STATUS, SERVER, CLIENT, AUTHN POLICY, DESTINATION RULE. */
type Expect = [status: string, server: string, client: string, policy: string, rule: string];

interface Row {
  name: string;
  docs: string;
  8000?: Expect;
  9001?: Expect;
  note?: RegExp;
}

const ROWS: Row[] = [
  { name: "no policy at all: PERMISSIVE; no DestinationRule: auto mutual TLS", docs: "", 8000: ["OK", "PERMISSIVE", "AUTO:MESH_MUTUAL", "-", "-"] },
  {
    name: "rule 3: mesh-wide STRICT (root namespace, no selector)",
    docs: pa("default", "mesh-system", "{mtls: {mode: STRICT}}"),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "default/mesh-system", "-"],
  },
  {
    name: "rule 4: a namespace-wide policy of another namespace does not apply",
    docs: pa("default", "bar", "{mtls: {mode: STRICT}}"),
    8000: ["OK", "PERMISSIVE", "AUTO:MESH_MUTUAL", "-", "-"],
  },
  {
    name: "rule 4: namespace-wide STRICT overrides mesh PERMISSIVE",
    docs: pa("default", "mesh-system", "{mtls: {mode: PERMISSIVE}}") + pa("default", "foo", "{mtls: {mode: STRICT}}"),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "default/foo", "-"],
  },
  {
    name: "rule 5: workload STRICT with a DestinationRule MESH_MUTUAL",
    docs: pa("httpbin", "foo", `{${SELECT}, mtls: {mode: STRICT}}`) + dr("httpbin", "foo", HOST, "{tls: {mode: MESH_MUTUAL}}"),
    8000: ["OK", "STRICT", "MESH_MUTUAL", "httpbin/foo", "httpbin/foo"],
  },
  {
    name: "rule 5: workload STRICT without a DestinationRule relies on auto mutual TLS (noted)",
    docs: pa("httpbin", "foo", `{${SELECT}, mtls: {mode: STRICT}}`),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "httpbin/foo", "-"],
    note: /rule 5 asks for a DestinationRule/,
  },
  {
    name: "rule 5: workload STRICT with a DestinationRule DISABLE conflicts",
    docs: pa("httpbin", "foo", `{${SELECT}, mtls: {mode: STRICT}}`) + dr("httpbin", "foo", HOST, "{tls: {mode: DISABLE}}"),
    8000: ["CONFLICT", "STRICT", "DISABLE", "httpbin/foo", "httpbin/foo"],
    note: /accepts only mutual TLS .* clients send plain text/,
  },
  {
    name: "rule 7: workload DISABLE under namespace STRICT without a DestinationRule conflicts (auto mTLS follows the namespace)",
    docs: pa("default", "foo", "{mtls: {mode: STRICT}}") + pa("httpbin", "foo", `{${SELECT}, mtls: {mode: DISABLE}}`),
    8000: ["CONFLICT", "DISABLE", "AUTO:MESH_MUTUAL", "httpbin/foo", "-"],
    note: /needs a DestinationRule for httpbin\.foo\.svc\.cluster\.local with tls\.mode DISABLE/,
  },
  {
    name: "rule 7: workload DISABLE plus DestinationRule DISABLE wins over namespace STRICT",
    docs:
      pa("default", "foo", "{mtls: {mode: STRICT}}") +
      pa("httpbin", "foo", `{${SELECT}, mtls: {mode: DISABLE}}`) +
      dr("httpbin", "foo", HOST, "{tls: {mode: DISABLE}}"),
    8000: ["OK", "DISABLE", "DISABLE", "httpbin/foo", "httpbin/foo"],
  },
  {
    name: "mesh DISABLE: auto mutual TLS sends plain text",
    docs: pa("default", "mesh-system", "{mtls: {mode: DISABLE}}"),
    8000: ["OK", "DISABLE", "AUTO:DISABLE", "default/mesh-system", "-"],
  },
  {
    name: "UNSET inherits: a workload policy without mode keeps the namespace's STRICT",
    docs: pa("default", "foo", "{mtls: {mode: STRICT}}") + pa("httpbin", "foo", `{${SELECT}}`),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "default/foo", "-"],
  },
  {
    name: "UNSET at mesh scope is PERMISSIVE",
    docs: pa("default", "mesh-system", "{}"),
    8000: ["OK", "PERMISSIVE", "AUTO:MESH_MUTUAL", "default/mesh-system", "-"],
  },
  {
    name: "a policy with a selector in the root namespace is ignored",
    docs: pa("httpbin", "mesh-system", `{${SELECT}, mtls: {mode: STRICT}}`),
    8000: ["OK", "PERMISSIVE", "AUTO:MESH_MUTUAL", "-", "-"],
    note: /httpbin\/mesh-system ignored: a PeerAuthentication with a selector in the root namespace/,
  },
  {
    name: "a workload policy whose selector does not match does not apply",
    docs: pa("other", "foo", "{selector: {matchLabels: {app: other}}, mtls: {mode: STRICT}}"),
    8000: ["OK", "PERMISSIVE", "AUTO:MESH_MUTUAL", "-", "-"],
  },
  {
    name: "only one namespace-wide policy: the first one",
    docs: pa("a", "foo", "{mtls: {mode: STRICT}}") + pa("b", "foo", "{mtls: {mode: DISABLE}}"),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "a/foo", "-"],
    note: /b\/foo ignored: only one namespace-wide policy is honoured/,
  },
  {
    name: "rule 6: port-level DISABLE (container port 9000) with a port-level DestinationRule DISABLE (service port 9001)",
    docs:
      pa("httpbin", "foo", `{${SELECT}, mtls: {mode: STRICT}, portLevelMtls: {"9000": {mode: DISABLE}}}`) +
      dr("httpbin", "foo", HOST, "{tls: {mode: MESH_MUTUAL}, portLevelSettings: [{port: {number: 9001}, tls: {mode: DISABLE}}]}"),
    8000: ["OK", "STRICT", "MESH_MUTUAL", "httpbin/foo", "httpbin/foo"],
    9001: ["OK", "DISABLE", "DISABLE", "httpbin/foo", "httpbin/foo"],
  },
  {
    name: "rule 6: port-level DISABLE without a port-level DestinationRule conflicts on that port only",
    docs: pa("httpbin", "foo", `{${SELECT}, mtls: {mode: STRICT}, portLevelMtls: {"9000": {mode: DISABLE}}}`),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "httpbin/foo", "-"],
    9001: ["CONFLICT", "DISABLE", "AUTO:MESH_MUTUAL", "httpbin/foo", "-"],
    note: /in portLevelSettings for this service port \(rule 6\)/,
  },
  {
    name: "rule 6: a port-level entry keyed by the service port (not the container port) does not apply",
    docs: pa("httpbin", "foo", `{${SELECT}, mtls: {mode: STRICT}, portLevelMtls: {"9001": {mode: DISABLE}}}`),
    9001: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "httpbin/foo", "-"],
    note: /portLevelMtls\[9001\] ignored: container port 9001 is bound to no service/,
  },
  {
    name: "rule 6: a port-level entry for a port bound to no service is ignored",
    docs: pa("httpbin", "foo", `{${SELECT}, mtls: {mode: STRICT}, portLevelMtls: {"7000": {mode: DISABLE}}}`),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "httpbin/foo", "-"],
    note: /portLevelMtls\[7000\] ignored: container port 7000 is bound to no service \(spec 1, rule 6\)/,
  },
  {
    name: "the most specific DestinationRule host wins",
    docs:
      pa("default", "mesh-system", "{mtls: {mode: STRICT}}") +
      dr("wild", "foo", "'*.foo.svc.cluster.local'", "{tls: {mode: DISABLE}}") +
      dr("exact", "foo", HOST, "{tls: {mode: MESH_MUTUAL}}"),
    8000: ["OK", "STRICT", "MESH_MUTUAL", "default/mesh-system", "exact/foo"],
  },
  {
    name: "a DestinationRule of the root namespace applies when the service's namespace has none",
    docs: pa("default", "mesh-system", "{mtls: {mode: STRICT}}") + dr("all", "mesh-system", "'*.local'", "{tls: {mode: DISABLE}}"),
    8000: ["CONFLICT", "STRICT", "DISABLE", "default/mesh-system", "all/mesh-system"],
  },
  {
    name: "a DestinationRule of another namespace is not used",
    docs: pa("default", "mesh-system", "{mtls: {mode: STRICT}}") + dr("elsewhere", "bar", HOST, "{tls: {mode: DISABLE}}"),
    8000: ["OK", "STRICT", "AUTO:MESH_MUTUAL", "default/mesh-system", "-"],
  },
];

interface JsonResult {
  host: string;
  port: number;
  status: string;
  server: { mode: string; policy: string | null };
  client: { mode: string; auto: boolean; destinationRule: string | null };
  notes: string[];
}

function columns(r: JsonResult): Expect {
  return [r.status, r.server.mode, r.client.auto ? `AUTO:${r.client.mode}` : r.client.mode, r.server.policy ?? "-", r.client.destinationRule ?? "-"];
}

/**
 * `meshctl authn tls-check httpbin-1.foo -f <file> -o json`, in this process:
 * the rules under test are the command's decisions, one per table row; the
 * program itself (flags, exit codes, output) is run below.
 */
async function tlsCheckJsonOf(file: string): Promise<{ stderr: string; report: { results: JsonResult[]; notes: string[] } }> {
  let stderr = "";
  const errors = new Writable({ write: (chunk, _encoding, done) => ((stderr += String(chunk)), done()) });
  const view = await loadView({ files: [file], namespace: "" }, errors);
  const report = tlsCheck(view, { pod: "httpbin-1", namespace: "foo", rootNamespace: DEFAULT_MESH_NAMESPACE });
  return { stderr, report: JSON.parse(tlsCheckJson(report)) };
}

describe("authn tls-check against files: precedence, port-level settings, conflicts", async () => {
  for (const row of ROWS) {
    test(row.name, async () => {
      const file = tempFile(WORKLOAD + row.docs);
      const { stderr, report } = await tlsCheckJsonOf(file);
      assert.equal(stderr, "");
      assert.deepEqual(
        report.results.map((r) => `${r.host}:${r.port}`),
        [`${HOST}:8000`, `${HOST}:9001`],
      );
      for (const port of [8000, 9001] as const) {
        const expected = row[port];
        if (expected) assert.deepEqual(columns(report.results.find((r) => r.port === port)!), expected, `port ${port}`);
      }
      const notes = [...report.notes, ...report.results.flatMap((r) => r.notes)];
      if (row.note)
        assert.ok(
          notes.some((n) => row.note!.test(n)),
          notes.join("\n"),
        );
    });
  }
});

describe("authn tls-check: output and arguments", async () => {
  const docs =
    WORKLOAD +
    pa("default", "foo", "{mtls: {mode: STRICT}}") +
    pa("httpbin", "foo", `{${SELECT}, mtls: {mode: DISABLE}}`) +
    dr("httpbin", "foo", HOST, "{tls: {mode: DISABLE}, portLevelSettings: [{port: {number: 9001}, tls: {mode: MESH_MUTUAL}}]}");

  test("the table has upstream's columns, then notes", async () => {
    const run = await meshctl(["authn", "tls-check", "httpbin-1", "-n", "foo", "-f", tempFile(docs)]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(
      run.stdout,
      [
        "HOST:PORT                            STATUS     SERVER    CLIENT        AUTHN POLICY   DESTINATION RULE",
        "httpbin.foo.svc.cluster.local:8000   OK         DISABLE   DISABLE       httpbin/foo    httpbin/foo",
        "httpbin.foo.svc.cluster.local:9001   CONFLICT   DISABLE   MESH_MUTUAL   httpbin/foo    httpbin/foo",
        "",
        "NOTE: httpbin.foo.svc.cluster.local:9001: server accepts only plain text (PeerAuthentication httpbin/foo (workload)), clients send mutual TLS (DestinationRule httpbin/foo port-level tls.mode MESH_MUTUAL): needs a DestinationRule for httpbin.foo.svc.cluster.local with tls.mode DISABLE (spec 1, rules 5 and 7)",
        "",
      ].join("\n"),
    );
  });

  test("the service argument keeps that service only; a Deployment's pod is found by its name prefix", async () => {
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: ratings, namespace: foo}
spec:
  selector: {matchLabels: {app: ratings}}
  template:
    metadata: {labels: {app: ratings}}
    spec: {containers: [{name: app, ports: [{containerPort: 8080}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: foo}
spec: {selector: {app: ratings}, ports: [{port: 9080, targetPort: 8080}]}
`;
    const file = tempFile(`${docs}---\n${deployment}`);
    const one = JSON.parse((await meshctl(["authn", "tls-check", "httpbin-1.foo", "httpbin", "-f", file, "-o", "json"])).stdout);
    assert.deepEqual(
      one.results.map((r: JsonResult) => r.port),
      [8000, 9001],
    );
    const none = JSON.parse((await meshctl(["authn", "tls-check", "httpbin-1.foo", "ratings.foo", "-f", file, "-o", "json"])).stdout);
    assert.deepEqual(none.results, []);
    const ratings = JSON.parse((await meshctl(["authn", "tls-check", "ratings-5d8f7-x2x9k.foo", "-f", file, "-o", "json"])).stdout);
    assert.deepEqual(
      ratings.results.map((r: JsonResult) => [r.host, r.port, r.status, r.server.mode]),
      [["ratings.foo.svc.cluster.local", 9080, "OK", "STRICT"]],
    );
    assert.equal(ratings.workload.from, "Deployment foo/ratings");
  });

  test("without a pod every service of the files is checked", async () => {
    const run = await meshctl(["authn", "tls-check", "-f", tempFile(docs), "-o", "json"]);
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.workload, null);
    assert.deepEqual(
      report.results.map((r: JsonResult) => `${r.port} ${r.status}`),
      ["8000 OK", "9001 CONFLICT"],
    );
  });

  test("an unknown pod is an error (exit 1); invalid resources are ignored with a warning", async () => {
    const run = await meshctl(["authn", "tls-check", "nope.foo", "-f", tempFile(docs)]);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /Error: meshctl authn tls-check: pod nope\.foo not found in files .* \(known: httpbin-1\.foo\)/);
    const bad = await meshctl(["authn", "tls-check", "httpbin-1.foo", "-f", tempFile(WORKLOAD + pa("bad", "foo", "{mtls: {mode: strict}}"))]);
    assert.equal(bad.status, 0);
    assert.match(
      bad.stderr,
      /Warning: ignored: .*PeerAuthentication foo\/bad: spec\.mtls\.mode: expected one of UNSET, DISABLE, PERMISSIVE, STRICT, got "strict"/,
    );
  });

  test("without -f or a sidecar it needs an orchestrator (exit 69); a missing file is a usage error (exit 2)", async () => {
    const run = await meshctl(["authn", "tls-check", "httpbin-1.foo"]);
    assert.equal(run.status, 69);
    assert.match(run.stderr, /meshctl authn tls-check: this command needs an orchestrator API, which is not available here; use `-f FILE…`/);
    const missing = await meshctl(["authn", "tls-check", "httpbin-1.foo", "-f", "/nonexistent.yaml"]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /cannot read "\/nonexistent\.yaml"/);
  });
});

describe("authn tls-check against a running sidecar", async () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startPolicyMesh();
  });
  after(async () => {
    await mesh?.stop();
  });

  test("reads the sidecar's /config_dump: its identity, labels, services and policies", async () => {
    const run = await meshctlAsync(["authn", "tls-check", "--admin", mesh.adminUrl]);
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.split("\n");
    assert.match(lines[0], /^HOST:PORT\s+STATUS\s+SERVER\s+CLIENT\s+AUTHN POLICY\s+DESTINATION RULE$/);
    assert.match(lines[1], /^petstore\.demo\.svc\.cluster\.local:80\s+OK\s+DISABLE\s+DISABLE\s+petstore\/demo\s+petstore\/demo$/);
    assert.match(lines[2], /^petstore\.demo\.svc\.cluster\.local:9091\s+CONFLICT\s+STRICT\s+DISABLE\s+petstore\/demo\s+petstore\/demo$/);
  });

  test("the pod argument must name the sidecar; --proxyAdminPort works like --admin; -o json", async () => {
    const port = String(mesh.sidecar.listening.admin);
    const ok = await meshctlAsync(["authn", "tls-check", "petstore-v1.demo", "--proxyAdminPort", port, "-o", "json"]);
    assert.equal(ok.status, 0, ok.stderr);
    const report = JSON.parse(ok.stdout);
    assert.equal(report.source, `sidecar http://127.0.0.1:${port}`);
    assert.deepEqual(report.workload, { pod: "petstore-v1", namespace: "demo", labels: { app: "petstore", version: "v1" }, from: "Pod demo/petstore-v1" });
    assert.deepEqual(report.results[1].server, {
      mode: "STRICT",
      scope: "port",
      policy: "petstore/demo",
      applied: { mesh: "default/mesh-system", namespace: null, workload: "petstore/demo" },
    });
    const wrong = await meshctlAsync(["authn", "tls-check", "reviews-v1.demo", "--admin", port]);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /the sidecar at http:\/\/127\.0\.0\.1:\d+ is petstore-v1\.demo, not reviews-v1\.demo/);
  });

  test("a changed policy file is picked up; a bad one is reported and the last good set keeps serving", async () => {
    const applied = (await stats(mesh.adminUrl)).get("config.applied") ?? 0;
    writeFileSync(join(mesh.sidecarConfigDir, "zz-ns.yaml"), pa("default", "demo", "{mtls: {mode: PERMISSIVE}}").slice(4));
    await waitFor("the new file to be applied", async () => (((await stats(mesh.adminUrl)).get("config.applied") ?? 0) > applied ? true : undefined));
    const run = await meshctlAsync(["authn", "tls-check", "--admin", mesh.adminUrl, "-o", "json"]);
    const results = JSON.parse(run.stdout).results;
    // The namespace-wide policy now applies, under the workload policy that decides.
    assert.deepEqual(
      results.map((r: JsonResult & { server: { applied: unknown } }) => [r.status, r.server.applied]),
      [
        ["OK", { mesh: "default/mesh-system", namespace: "default/demo", workload: "petstore/demo" }],
        ["CONFLICT", { mesh: "default/mesh-system", namespace: "default/demo", workload: "petstore/demo" }],
      ],
    );

    const errors = (await stats(mesh.adminUrl)).get("config.errors") ?? 0;
    writeFileSync(join(mesh.sidecarConfigDir, "zz-bad.yaml"), pa("broken", "demo", "{mtls: {mode: strict}}").slice(4));
    await waitFor("the config error to be counted", async () => (((await stats(mesh.adminUrl)).get("config.errors") ?? 0) > errors ? true : undefined));
    // The log line reaches this process through a pipe, possibly after the counter moved: awaited too.
    const logged =
      /zz-bad\.yaml: PeerAuthentication demo\/broken: spec\.mtls\.mode: expected one of UNSET, DISABLE, PERMISSIVE, STRICT, got "strict"; keeping the last good configuration/;
    await waitFor(`the sidecar's log to name the bad file (${logged.source})`, () => (logged.test(mesh.sidecar.output()) ? true : undefined));
    const again = await meshctlAsync(["authn", "tls-check", "--admin", mesh.adminUrl, "-o", "json"]);
    assert.deepEqual(
      JSON.parse(again.stdout).results.map((r: JsonResult) => r.status),
      ["OK", "CONFLICT"],
    );
  });
});
