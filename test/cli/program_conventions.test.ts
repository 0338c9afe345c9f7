// One convention for every program (docs/daemon-reference.md "Conventions"),
// checked on the real built programs: usage errors, --version, signals,
// stdout/stderr, --log_as_json, a closed stdout; YAML merge keys and aliases,
// validate's errors and the orchestrator-only commands in-process (about the
// command, not the process: test/cli/in_process.ts).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import pkg from "../../package.json" with { type: "json" };
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { COMMANDS } from "../../host/cli/meshctl/commands/index.ts";
import { meshctlInProcess } from "./in_process.ts";
import { tempDir } from "../support/processes.ts";

const OUT = join(import.meta.dirname, "..", "..", "build", "out");
const bin = (name: string) => join(OUT, `${name}.mjs`);

function run(name: string, args: string[], env: NodeJS.ProcessEnv = {}, options: { cwd?: string; input?: string } = {}) {
  const r = spawnSync(process.execPath, [bin(name), ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 600_000, ...options });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const tmp = () => tempDir("conventions-");

/** Polls until `probe` is true (>= 60 s), for output a daemon writes after a signal. */
async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const PROGRAMS: Array<[string, string[]]> = [
  ["disco-agent", ["proxy"]],
  ["hubs", ["server"]],
  ["mesh_ca", []],
  ["meshctl", ["version"]],
];

describe("usage errors: exit 2, one line naming the flag", () => {
  for (const [name, sub] of PROGRAMS) {
    it(`${name} ${sub.join(" ")} --no-such-flag`, () => {
      const r = run(name, [...sub, "--no-such-flag"]);
      assert.equal(r.status, 2);
      assert.equal(r.stdout, "");
      assert.equal(r.stderr.split("\n").length, 2, r.stderr);
      assert.match(r.stderr, /--no-such-flag/);
    });
  }
  it("a bad flag value names the flag (each daemon)", () => {
    for (const [name, args, flag] of [
      ["disco-agent", ["proxy", "--proxyAdminPort", "x"], "--proxyAdminPort"],
      // Upstream's proxy DNS domain is <namespace>.svc.<mesh domain>: a bare mesh domain is refused before anything is read.
      ["disco-agent", ["proxy", "--configDir", import.meta.dirname, "--domain", "example.internal"], "--domain"],
      ["hubs", ["server", "--maxMessageSize", "-1"], "--maxMessageSize"],
      ["mesh_ca", ["--workload-cert-ttl", "soon"], "--workload-cert-ttl"],
      ["hubs", ["server", "--log_output_level", "api:loud"], "--log_output_level"],
    ] as const) {
      const r = run(name, [...args]);
      assert.equal(r.status, 2, `${name} ${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr.split("\n").length, 2, r.stderr);
      assert.ok(r.stderr.includes(flag), r.stderr);
    }
  });
});

describe("--version and version", () => {
  for (const [name] of PROGRAMS) {
    it(`${name} --version prints the version; version -s too`, () => {
      assert.deepEqual(run(name, ["--version"]), { status: 0, stdout: `${pkg.version}\n`, stderr: "" });
      assert.equal(run(name, ["version", "-s"]).stdout, `${pkg.version}\n`);
    });
  }
  it("disco-agent version and request take the common logging flags", () => {
    const v = run("disco-agent", ["version", "-o", "json", "--log_as_json", "--log_output_level", "all:debug"]);
    assert.equal(v.status, 0, v.stderr);
    assert.equal(JSON.parse(v.stdout).version, pkg.version);
    // Nothing listens on port 1: the request fails (exit 1), but its flags are accepted.
    const r = run("disco-agent", ["request", "GET", "/ready", "--proxyAdminPort", "1", "--log_output_level", "default:debug"]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^error: admin port 1: /);
  });
});

/**
 * The packages a built program loads before it runs anything: its static
 * imports and theirs, across chunks; a package bundled into a chunk
 * (build/build.mjs BUNDLED_PACKAGES) counts when that chunk is loaded.
 */
function packagesLoadedAtStart(name: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(OUT, file), "utf8");
    // esbuild writes static imports as `import ... from "x";` or `import "x";` at the start of a line; `import("x")` is dynamic.
    for (const m of text.matchAll(/^import\s*(?:[^;"'()]*?\sfrom\s*)?"([^"]+)";/gm)) {
      const target = m[1];
      if (target.startsWith("./")) visit(target.slice(2));
      else if (!target.startsWith("node:")) packages.add(target);
    }
    // Bundled code keeps its source's path in a comment: `// node_modules/<package>/…`.
    for (const m of text.matchAll(/^\/\/ node_modules\/((?:@[^/\s]+\/)?[^/\s]+)\//gm)) packages.add(m[1]);
  };
  visit(`${name}.mjs`);
  return packages;
}

describe("daemons load their server only to serve: version, --help and usage errors stay light", () => {
  const SERVER_ONLY = [
    "@grpc/grpc-js",
    "@grpc/proto-loader",
    "@grpc/reflection",
    "grpc-health-check",
    "protobufjs",
    "jose",
    "@peculiar/x509",
    "prom-client",
    "@assemblyscript/loader",
  ];
  for (const name of ["disco-agent", "disco-discovery", "hubs", "mesh_ca"]) {
    it(`${name} imports none of ${SERVER_ONLY.length} server packages at start`, () => {
      const loaded = packagesLoadedAtStart(name);
      assert.ok(loaded.has("commander"), `the walk finds ${name}'s imports: ${[...loaded].join(", ")}`);
      assert.deepEqual(
        SERVER_ONLY.filter((p) => loaded.has(p)),
        [],
      );
    });
  }
});

describe("daemons: signals, logs on stderr, --log_as_json", () => {
  const started: Array<Daemon<unknown>> = [];
  after(async () => {
    for (const d of started) await d.stop("SIGKILL");
  });
  const start = async <T>(name: string, args: string[], prefix: string, env: NodeJS.ProcessEnv = process.env) => {
    const d = await startDaemon<T>(bin(name), args, prefix, 60_000, env);
    started.push(d as Daemon<unknown>);
    return d;
  };

  it("disco-agent: --log_output_level all:debug starts; SIGHUP rereads --configDir and never stops it; SIGTERM drains, exit 0", async () => {
    const dir = tmp();
    const agent = await start(
      "disco-agent",
      ["proxy", "--configDir", dir, "--proxyAdminPort", "0", "--inboundPort", "0", "--outboundPort", "0", "--log_output_level", "all:debug"],
      "disco-agent listening ",
    );
    agent.proc.kill("SIGHUP");
    await until("the reload log line", () => agent.output().includes("SIGHUP received: configuration reloaded"));
    assert.equal(agent.proc.exitCode, null, "SIGHUP must not stop the agent");
    const admin = (agent.listening as { admin: number }).admin;
    assert.equal((await fetch(`http://127.0.0.1:${admin}/ready`)).status, 200);
    assert.equal(await agent.stop(), 0);
  });

  it("hubs: SIGHUP rereads the config store (a new rule applies at once); logs go to stderr, stdout has the listening line only", async () => {
    const dir = tmp();
    const hub = spawn(
      process.execPath,
      [
        bin("hubs"),
        "server",
        "--address",
        "tcp://127.0.0.1:0",
        "--monitoringPort",
        "0",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
        "--configStoreURL",
        `fs://${dir}`,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    hub.stdout.on("data", (c: Buffer) => (stdout += c));
    hub.stderr.on("data", (c: Buffer) => (stderr += c));
    const exited = new Promise<number | null>((r) => hub.on("exit", (code) => r(code)));
    try {
      await until("the listening line", () => stdout.includes("\n"));
      hub.kill("SIGHUP");
      await until("the reload log line", () => stderr.includes("SIGHUP received: configuration reloaded"));
      assert.equal(hub.exitCode, null, "SIGHUP must not stop the hub");
      assert.match(stdout, /^hubs listening \{.*\}\n$/);
      hub.kill("SIGTERM");
      assert.equal(await exited, 0);
    } finally {
      if (hub.exitCode === null) hub.kill("SIGKILL");
    }
  });

  it("mesh_ca: SIGHUP is logged (no reloadable configuration) and ignored", async () => {
    const ca = await start(
      "mesh_ca",
      ["--self-signed-ca", "--grpc-port", "0", "--grpc-address", "127.0.0.1", "--monitoring-port", "0", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1"],
      "mesh_ca listening ",
      {
        ...process.env,
        ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false",
      },
    );
    ca.proc.kill("SIGHUP");
    await until("the SIGHUP log line", () => ca.output().includes("SIGHUP received: this daemon has no configuration to reload"));
    assert.equal(ca.proc.exitCode, null);
    assert.equal(await ca.stop("SIGINT"), 0);
  });

  it("--log_as_json --log_target stdout: every line on stdout is JSON, the listening line included", async () => {
    const dir = tmp();
    const proc = spawn(
      process.execPath,
      [
        bin("disco-agent"),
        "proxy",
        "--configDir",
        dir,
        "--proxyAdminPort",
        "0",
        "--inboundPort",
        "0",
        "--outboundPort",
        "0",
        "--log_as_json",
        "--log_target",
        "stdout",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    proc.stdout.on("data", (c: Buffer) => (stdout += c));
    const exited = new Promise<number | null>((r) => proc.on("exit", (code) => r(code)));
    try {
      await until("the listening record", () => stdout.includes('"msg":"disco-agent listening"'));
      proc.kill("SIGTERM");
      assert.equal(await exited, 0);
      const lines = stdout.trimEnd().split("\n");
      assert.ok(lines.length >= 3, stdout);
      const records = lines.map((l) => JSON.parse(l) as { msg: string; listeners?: { admin: number } });
      assert.ok(records.find((r) => r.msg === "disco-agent listening")?.listeners?.admin);
    } finally {
      if (proc.exitCode === null) proc.kill("SIGKILL");
    }
  });
});

// The other meshctl tests run its command line in-process (test/cli/in_process.ts);
// these check what only the built program shows: each command's module loads
// from its chunk of build/out, stdin is the process's, and the command's status
// is the process's exit status.
describe("the built meshctl: every command module, stdin and exit status", () => {
  const FIXTURES = join(import.meta.dirname, "fixtures");
  // A command line naming no command loads every command module (commands/index.ts loadersFor), each from
  // its chunk: two programs check them all (each command's own --help is checked in-process, command_table).
  it("meshctl --help and meshctl x --help: every command module loads, every command is listed, exit 0", () => {
    const listed = new Set<string>();
    for (const args of [["--help"], ["x", "--help"]]) {
      const r = run("meshctl", args);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, "");
      assert.match(r.stdout, /^Usage: meshctl /);
      for (const m of r.stdout.matchAll(/^ {2}([a-z][a-z-]*(?:\|[a-z][a-z-]*)*)/gm)) for (const word of m[1].split("|")) listed.add(word);
    }
    assert.deepEqual(
      Object.keys(COMMANDS).filter((word) => !listed.has(word)),
      [],
    );
  });

  it("analyze reads - from stdin and exits 79 on an Error", () => {
    const r = run(
      "meshctl",
      ["analyze", "--use-kube=false", "-"],
      {},
      { cwd: FIXTURES, input: readFileSync(join(FIXTURES, "analyze", "regex.bad.yaml"), "utf8") },
    );
    assert.equal(r.status, 79, r.stderr);
    assert.match(r.stdout, /^Error \[MSH0122\] .*<stdin>/);
  });

  it("x hub-eval reads request lines from stdin, one JSON line each", () => {
    const file = join(tmp(), "spec.yaml");
    writeFileSync(
      file,
      'apiVersion: config.mesh.io/v1alpha2\nkind: HTTPAPISpec\nmetadata: {name: books, namespace: shop}\nspec:\n  patterns: [{httpMethod: GET, uriTemplate: "/books/{id}"}]\n',
    );
    const request = JSON.stringify({ method: "GET", path: "/books/7", time: "2026-11-22T10:00:00Z" });
    const r = run("meshctl", ["x", "hub-eval", "-f", file], {}, { input: `${request}\n${request}\n` });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trimEnd().split("\n").length, 2, r.stdout);
  });
});

describe("meshctl output", () => {
  it("a closed stdout ends quietly (exit 141, nothing on stderr)", async () => {
    const proc = spawn(process.execPath, [bin("meshctl"), "analyze", "--list-analyzers"], { stdio: ["ignore", "pipe", "pipe"] });
    proc.stdout.destroy();
    let stderr = "";
    proc.stderr.on("data", (c: Buffer) => (stderr += c));
    const code = await new Promise<number | null>((r) => proc.on("exit", (c) => r(c)));
    assert.equal(code, 141);
    assert.equal(stderr, "");
  });

  it("YAML merge keys and anchors are applied; an undefined alias is one error naming the file", async () => {
    const dir = tmp();
    const good = join(dir, "merge.yaml");
    writeFileSync(
      good,
      `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: &meta {name: strict, namespace: foo}
spec:
  selector: {matchLabels: {app: x}}
  mtls: &strict {mode: STRICT}
  portLevelMtls:
    "8080": {<<: *strict}
    "9090":
      <<: *strict
      mode: DISABLE
`,
    );
    const ok = await meshctlInProcess(["validate", "-f", good]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, `${JSON.stringify(good)} is valid\n`);
    // Unmerged, the entries would hold an unknown field "<<" (a warning) and no mode.
    assert.doesNotMatch(ok.stderr, /Warning|Error/, ok.stderr);
    const bad = join(dir, "alias.yaml");
    writeFileSync(bad, "apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: x, namespace: foo}\nspec:\n  <<: *nope\n");
    const r = await meshctlInProcess(["validate", "-f", bad]);
    assert.equal(r.status, 1);
    assert.ok(r.stderr.includes(`Error: ${bad}: YAML document 1: (document): expected valid YAML or JSON, got undefined alias *nope`), r.stderr);
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  });

  it("validate reports every error of a document", async () => {
    const file = join(tmp(), "client.yaml");
    writeFileSync(
      file,
      `apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: {name: c, namespace: foo}
spec:
  transport: {networkFailPolicy: {policy: SOMETIMES}, checkCluster: 5}
  ignoreForwardedAttributes: 4
`,
    );
    const r = await meshctlInProcess(["validate", "-f", file]);
    assert.equal(r.status, 1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("Error: "));
    assert.deepEqual(
      errors.map((l) => l.slice(`Error: ${file}: HttpClientConfig foo/c: `.length).split(":")[0]),
      ["spec.transport.networkFailPolicy.policy", "spec.transport.checkCluster", "spec.ignoreForwardedAttributes"],
    );
  });

  it("commands that need an orchestrator API say what they would need and exit 69", async () => {
    for (const args of [
      ["manifest", "apply", "-f", "x.yaml"],
      ["x", "add-to-mesh", "deployment", "foo"],
      ["dashboard", "controlz", "p"],
      ["x", "post-install", "webhook", "status"],
      ["upgrade", "--force"],
    ]) {
      const r = await meshctlInProcess(args);
      assert.equal(r.status, 69, args.join(" "));
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /^meshctl [a-z -]+: needs an orchestrator API .*nothing was done/);
      assert.equal(r.stderr.split("\n").length, 2);
    }
  });
});
