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
/** Spec 2, "Common logging flags": disco-discovery's scopes. */
const SPEC_SCOPES = [
  "ads",
  "all",
  "attributes",
  "authn",
  "configmapcontroller",
  "default",
  "grpcAdapter",
  "mcp",
  "model",
  "pkica",
  "rbac",
  "rootcertrotator",
  "secretcontroller",
  "serverca",
  "validation",
  "validationController",
  "validationServer",
];

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [DISCOVERY_BIN, "discovery", "--configDir", tempDir("disco-flags-"), ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("disco-discovery discovery: flags and variables", async () => {
  it("refuses a bad --meshConfig, --trust-domain, DISCO_CERT_PROVIDER, --domain and push variables with one line, before serving", async () => {
    const mesh = join(tempDir("disco-mesh-"), "mesh.yaml");
    writeFileSync(mesh, "rootNamespace: Bad_NS\n");
    const autoMtls = join(tempDir("disco-mesh-"), "auto.yaml");
    writeFileSync(autoMtls, "enableAutoMtls: maybe\n");
    const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [["--meshConfig", "/nonexistent/mesh"], {}, /^disco-discovery discovery: --meshConfig: \/nonexistent\/mesh: .*ENOENT\n$/],
      [
        ["--meshConfig", mesh],
        {},
        /^disco-discovery discovery: --meshConfig: .*mesh\.yaml: rootNamespace: expected a namespace name \(a DNS label\), got "Bad_NS"\n$/,
      ],
      [["--trust-domain", "bad domain"], {}, /^disco-discovery discovery: --trust-domain: expected a trust domain \(a DNS name\), got "bad domain"\n$/],
      [[], { DISCO_CERT_PROVIDER: "orch" }, /^disco-discovery discovery: DISCO_CERT_PROVIDER="orch": expected anchor /],
      [
        ["--domain", "bad_domain.local"],
        {},
        /^disco-discovery discovery: --domain: expected a DNS domain such as cluster\.local .*, got "bad_domain\.local"\n$/,
      ],
      [["--domain", ".example.com"], {}, /^disco-discovery discovery: --domain: expected a DNS domain/],
      [[], { DISCO_SCOPE_PUSHES: "maybe" }, /^disco-discovery discovery: DISCO_SCOPE_PUSHES="maybe": expected true or false\n$/],
      [
        [],
        { TERMINATION_DRAIN_DURATION_SECONDS: "5s" },
        /^disco-discovery discovery: TERMINATION_DRAIN_DURATION_SECONDS="5s": expected an integer from 0 to 2147483\n$/,
      ],
      [["--configDir", "/nonexistent/mesh-config"], {}, /^disco-discovery discovery: --configDir: no such directory: \/nonexistent\/mesh-config\n$/],
      // Every log scope spec 2 lists for disco-discovery is accepted (the folder is what is refused).
      [
        ["--configDir", "/nonexistent/mesh-config", "--log_output_level", SPEC_SCOPES.map((s) => `${s}:debug`).join(",")],
        {},
        /^disco-discovery discovery: --configDir: no such directory/,
      ],
      [["-n", "mesh-system"], {}, /^disco-discovery discovery: --namespace: not applicable here: needs an orchestrator API/],
      [
        ["--registries", "Orch"],
        {},
        /^error: option '--registries <list>' argument 'Orch' is invalid\. the Orch registry needs an orchestrator API, which is not reachable here/,
      ],
      [["--grpcAddr", "nonsense"], {}, /^error: option '--grpcAddr <address>' argument 'nonsense' is invalid\. expected HOST:PORT or :PORT/],
      [["-a", "shop"], {}, /^disco-discovery discovery: --appNamespace: not applicable here: needs an orchestrator API/],
      [["--meshConfig", autoMtls], {}, /^disco-discovery discovery: --meshConfig: .*auto\.yaml: enableAutoMtls: expected true or false/],
    ];
    for (const [args, env, expected] of cases) {
      const r = run([...OFF, ...args], env);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, expected);
      assert.equal(r.stdout, "", "nothing served");
    }
  });

  it("request and version accept spec 2's flags common to every subcommand (no effect there)", async () => {
    const r = spawnSync(
      process.execPath,
      [
        DISCOVERY_BIN,
        "version",
        "-s",
        "--ctrlz_port",
        "9876",
        "--ctrlz_address",
        "localhost",
        "--keepaliveInterval",
        "30s",
        "--keepaliveTimeout",
        "10s",
        "--keepaliveMaxServerConnectionAge",
        "1h",
      ],
      { encoding: "utf8" },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\d+\.\d+\.\d+/);
    const q = spawnSync(process.execPath, [DISCOVERY_BIN, "request", "GET", "/debug/syncz", "--httpAddr", "127.0.0.1:1", "--ctrlz_port", "9876"], {
      encoding: "utf8",
    });
    assert.equal(q.status, 1, "the flag is accepted; the request fails only for want of a daemon");
    assert.match(q.stderr, /^error: --httpAddr 127\.0\.0\.1:1: connect ECONNREFUSED/);
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
    const daemon = await startDaemon<{ ctrlz: string }>(
      DISCOVERY_BIN,
      ["discovery", "--configDir", tempDir("disco-meshcfg-config-"), ...OFF, "--meshConfig", mesh],
      "disco-discovery listening: ",
    );
    try {
      assert.match(daemon.listening.ctrlz, /^127\.0\.0\.1:\d+$/);
      assert.match(daemon.output(), /mesh config .*mesh\.yaml: rootNamespace mesh-control, trustDomain example\.org/);
      assert.match(daemon.output(), /--meshConfig .*mesh\.yaml: enableTracing: no effect on disco-discovery/);
    } finally {
      assert.equal(await daemon.stop(), 0);
    }
  });
});
