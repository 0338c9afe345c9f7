// disco-discovery's flags and variables against the real program: bad values
// are refused before anything is served (exit 2, one line naming the flag),
// a certificate asked for but missing stops the start (exit 1), and a mesh
// config is read (rootNamespace, trustDomain; other fields said to have no effect).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { startDaemon, tempDir } from "../support/processes.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";

const OFF = ["--grpcAddr", "", "--httpAddr", "", ...SIDE_LISTENERS_OFF];

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [DISCOVERY_BIN, "discovery", "--configDir", tempDir("disco-flags-"), ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("disco-discovery discovery: flags and variables", async () => {
  it("refuses a bad --meshConfig, --trust-domain, DISCO_CERT_PROVIDER, --domain and push variables with one line, before serving", async () => {
    const mesh = join(tempDir("disco-mesh-"), "mesh.yaml");
    writeFileSync(mesh, "rootNamespace: Bad_NS\n");
    const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [["--meshConfig", "/nonexistent/mesh"], {}, /^disco-discovery discovery: --meshConfig: \/nonexistent\/mesh: .*ENOENT\n$/],
      [["--meshConfig", mesh], {}, /^disco-discovery discovery: --meshConfig: .*mesh\.yaml: rootNamespace: expected a namespace name \(a DNS label\), got "Bad_NS"\n$/],
      [["--trust-domain", "bad domain"], {}, /^disco-discovery discovery: --trust-domain: expected a trust domain \(a DNS name\), got "bad domain"\n$/],
      [[], { DISCO_CERT_PROVIDER: "orch" }, /^disco-discovery discovery: DISCO_CERT_PROVIDER="orch": expected anchor /],
      [["--domain", "bad_domain.local"], {}, /^disco-discovery discovery: --domain: expected a DNS domain such as cluster\.local .*, got "bad_domain\.local"\n$/],
      [["--domain", ".example.com"], {}, /^disco-discovery discovery: --domain: expected a DNS domain/],
      [[], { DISCO_SCOPE_PUSHES: "maybe" }, /^disco-discovery discovery: DISCO_SCOPE_PUSHES="maybe": expected true or false\n$/],
      [[], { TERMINATION_DRAIN_DURATION_SECONDS: "5s" }, /^disco-discovery discovery: TERMINATION_DRAIN_DURATION_SECONDS="5s": expected an integer from 0 to 2147483\n$/],
    ];
    for (const [args, env, expected] of cases) {
      const r = run([...OFF, ...args], env);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, expected);
      assert.equal(r.stdout, "", "nothing served");
    }
  });

  it("a certificate asked for (--secureGrpcAddr given) but missing stops the start, naming the file", async () => {
    const r = run([...OFF, "--secureGrpcAddr", "127.0.0.1:0"], { DISCO_CERT_DIR: "/nonexistent/certs" });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /failed to start: DISCO_CERT_DIR root-cert\.pem \/nonexistent\/certs\/root-cert\.pem: ENOENT/);
  });

  it("reads the mesh config: its root namespace and trust domain are taken, other fields are said to have no effect", async () => {
    const dir = tempDir("disco-meshcfg-");
    const mesh = join(dir, "mesh.yaml");
    writeFileSync(mesh, "rootNamespace: mesh-control\ntrustDomain: example.org\nenableTracing: true\ndefaultConfig:\n  hubAddress: hub.mesh-control:9091\n");
    const daemon = await startDaemon<{ ctrlz: string }>(DISCOVERY_BIN, ["discovery", "--configDir", tempDir("disco-meshcfg-config-"), ...OFF, "--meshConfig", mesh], "disco-discovery listening: ");
    try {
      assert.match(daemon.listening.ctrlz, /^127\.0\.0\.1:\d+$/);
      assert.match(daemon.output(), /mesh config .*mesh\.yaml: rootNamespace mesh-control, trustDomain example\.org/);
      assert.match(daemon.output(), /--meshConfig .*mesh\.yaml: enableTracing: no effect on disco-discovery/);
    } finally {
      assert.equal(await daemon.stop(), 0);
    }
  });
});
