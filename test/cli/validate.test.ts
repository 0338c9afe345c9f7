import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempDir } from "../support/processes.ts";
import { meshctlInProcess } from "./in_process.ts";

/** meshctl in-process (in_process.ts); `lines`: its Error and Warning lines. */
async function meshctl(args: string[], input?: string) {
  const run = await meshctlInProcess(args, { input });
  return { ...run, lines: run.stderr.split("\n").filter((l) => /^(Error|Warning): /.test(l)) };
}

const dir = tempDir("validate-");
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const GOOD = file(
  "good.yaml",
  `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: httpbin, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  mtls: { mode: STRICT }
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: httpbin, namespace: foo }
spec: { host: httpbin.foo.svc.cluster.local, trafficPolicy: { tls: { mode: MESH_MUTUAL } } }
`,
);
const BAD = file(
  "bad.yaml",
  `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: httpbin, namespace: foo }
spec: { mtls: { mode: strict }, portLevelMtls: { "0": { mode: STRICT } } }
---
apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata: { name: gw }
spec: { servers: [{ port: { number: 80, name: http, protocol: HTTP }, hosts: ["*"], bogus: 1 }] }
`,
);
const BINDING = file(
  "binding.yaml",
  `apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpecBinding
metadata: { name: b, namespace: foo }
spec: { services: [{ name: books }], apiSpecs: [{ name: books }] }
`,
);

describe("meshctl validate", async () => {
  it("accepts valid files: exit 0, the deprecation notice on stderr, each file reported valid", async () => {
    const run = await meshctl(["validate", "-f", GOOD]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /^meshctl validate is deprecated .* use `meshctl analyze`/);
    assert.equal(run.stdout, `${JSON.stringify(GOOD)} is valid\n`);
    assert.deepEqual(run.lines, []);
  });

  it("prints every problem as Error: <file>: <Kind ns/name>: <field path>: <message> and exits 1", async () => {
    const run = await meshctl(["validate", "-f", BAD, "-f", GOOD]);
    assert.equal(run.status, 1);
    assert.deepEqual(run.lines, [
      `Error: ${BAD}: PeerAuthentication foo/httpbin: spec.mtls.mode: expected one of UNSET, DISABLE, PERMISSIVE, STRICT, got "strict"`,
      `Error: ${BAD}: PeerAuthentication foo/httpbin: spec.portLevelMtls: expected a selector with matchLabels alongside portLevelMtls (port-level settings apply to workload policies only)`,
      `Error: ${BAD}: PeerAuthentication foo/httpbin: spec.portLevelMtls[0]: expected a port number from 1 to 65535 as the key, got "0"`,
      `Error: ${BAD}: Gateway default/gw: spec.servers[0].bogus: unknown field (known: port, hosts, tls, name, bind, defaultEndpoint)`,
    ]);
    assert.equal(run.stdout, `${JSON.stringify(GOOD)} is valid\n`);
  });

  it("reads stdin with -", async () => {
    const run = await meshctl(["validate", "-f", "-"], "apiVersion: v1\nkind: Service\nmetadata: { name: Bad }\n");
    assert.equal(run.status, 1);
    assert.deepEqual(run.lines, [
      "Error: <stdin>: Service default/Bad: metadata.name: expected a DNS-1123 label (lower-case letters, digits and '-', up to 63, starting and ending with a letter or digit), got \"Bad\"",
    ]);
  });

  it("reads directories recursively, YAML and JSON", async () => {
    const d = join(dir, "tree");
    mkdirSync(join(d, "sub"), { recursive: true });
    writeFileSync(join(d, "a.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata: { name: a }\n");
    writeFileSync(join(d, "sub", "b.json"), JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "b" } }));
    writeFileSync(join(d, "notes.txt"), "not config");
    const run = await meshctl(["validate", "-f", d]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `${JSON.stringify(join(d, "a.yaml"))} is valid\n${JSON.stringify(join(d, "sub", "b.json"))} is valid\n`);
  });

  it("reports YAML syntax errors with the file and goes on", async () => {
    const broken = file("broken.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: { name: a\n");
    const run = await meshctl(["validate", "-f", broken, "-f", GOOD]);
    assert.equal(run.status, 1);
    assert.match(run.lines[0], new RegExp(`^Error: ${broken}: YAML document 1: \\(document\\): expected valid YAML or JSON`));
  });

  it("checks references between resources with -x / --referential", async () => {
    assert.equal((await meshctl(["validate", "-f", BINDING])).status, 0);
    for (const flag of ["-x", "--referential"]) {
      const run = await meshctl(["validate", flag, "-f", BINDING]);
      assert.equal(run.status, 1);
      assert.deepEqual(run.lines, [
        `Error: ${BINDING}: HTTPAPISpecBinding foo/b: spec.apiSpecs[0]: expected a reference to a HTTPAPISpec in the given files, got foo/books, which is not defined`,
      ]);
    }
  });

  it("exits 2 on usage errors: a missing file, no -f", async () => {
    const missing = await meshctl(["validate", "-f", join(dir, "nope.yaml")]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /cannot read ".*nope.yaml": no such file or directory/);
    assert.equal((await meshctl(["validate"])).status, 2);
  });

  it("accepts the global flags before and after the command; -n sets the default namespace", async () => {
    for (const args of [
      ["validate", "-f", BAD, "-i", "foo"],
      ["-i", "foo", "validate", "-f", BAD],
      ["--context", "", "validate", "-f", BAD, "--log_output_level", "default:debug,validation:none"],
    ]) {
      const run = await meshctl(args);
      assert.equal(run.status, 1, `${args.join(" ")}: ${run.stderr}`);
      assert.ok(run.lines.some((l) => l.includes("Gateway default/gw")));
    }
    assert.ok((await meshctl(["validate", "-f", BAD, "-n", "shop"])).lines.some((l) => l.includes("Gateway shop/gw")));
    assert.ok((await meshctl(["--namespace", "shop", "validate", "-f", BAD])).lines.some((l) => l.includes("Gateway shop/gw")));
  });

  it("--context and -c/--orchconfig with a value: they need an orchestrator API, so nothing is done (exit 69, as orchestrator-bound commands)", async () => {
    for (const [args, flag, command] of [
      [["--context", "prod", "validate", "-f", GOOD], "--context", "validate"],
      [["validate", "-f", GOOD, "-c", "/dev/null"], "--orchconfig", "validate"],
      [["proxy-config", "listener", "--orchconfig=/root/.kube/config", "--file", GOOD], "--orchconfig", "proxy-config listener"],
    ] as const) {
      const run = await meshctl([...args]);
      assert.equal(run.status, 69, `${args.join(" ")}: ${run.stderr}`);
      assert.equal(run.stdout, "");
      assert.equal(
        run.stderr,
        `meshctl ${command}: ${flag}: needs an orchestrator API to read that cluster's configuration; this build works on files and running sidecars only, so nothing was done (docs/meshctl.md#global-flags)\n`,
      );
    }
  });

  it("refuses a bad --log_output_level as a usage error", async () => {
    const run = await meshctl(["validate", "-f", GOOD, "--log_output_level", "default:loud"]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /unknown level "loud" for scope default/);
  });
});

describe("meshctl version", async () => {
  it("prints the version offline; --remote says no control plane is reachable and exits 69", async () => {
    const short = await meshctl(["version", "-s"]);
    assert.equal(short.status, 0);
    assert.match(short.stdout, /^\d+\.\d+\.\d+\n$/);
    assert.equal((await meshctl(["version", "--remote=false", "-s", "-i", "foo"])).status, 0);
    const json = await meshctl(["-n", "x", "version", "-o", "json"]);
    assert.equal(JSON.parse(json.stdout).version, short.stdout.trim());
    const remote = await meshctl(["version", "--remote"]);
    assert.equal(remote.status, 69);
    assert.match(remote.stdout, /^version: /);
    assert.match(remote.stderr, /no control plane is reachable/);
  });
});
