// docs/daemon-reference.md against the programs: every spec flag and
// variable the doc calls "not applicable" is refused by the real program
// with the reason the doc gives; its default is accepted.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { AGENT_NOT_APPLICABLE_ENV, AGENT_NOT_APPLICABLE_FLAGS } from "../../host/daemon/spec_surface/disco_agent.ts";
import { HUB_NOT_APPLICABLE_ENV, HUB_NOT_APPLICABLE_FLAGS } from "../../host/daemon/spec_surface/hubs.ts";
import { DISCOVERY_NOT_APPLICABLE_ENV, DISCOVERY_NOT_APPLICABLE_FLAGS } from "../../host/daemon/spec_surface/disco_discovery.ts";
import { ANCHOR_NOT_APPLICABLE_ENV, ANCHOR_NOT_APPLICABLE_FLAGS } from "../../host/daemon/spec_surface/mesh_ca.ts";
import type { NotApplicable } from "../../host/daemon/spec_surface/not_applicable.ts";
import { tempDir } from "../support/processes.ts";

const ROOT = join(import.meta.dirname, "..", "..");
/** The DI variables disco-discovery applies (host/daemon/spec_surface/disco_discovery.ts discoveryVariables, host/discovery/secure_xds.ts). */
const DISCOVERY_VARIABLES = [
  "DISCO_DEBOUNCE_AFTER",
  "DISCO_DEBOUNCE_MAX",
  "DISCO_ENABLE_EDS_DEBOUNCE",
  "DISCO_PUSH_THROTTLE",
  "DISCO_SCOPE_PUSHES",
  "DISCO_ENABLE_FALLTHROUGH_ROUTE",
  "DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND",
  "DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND",
  "DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT",
  "DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP",
  "DISCO_SIDECAR_USE_REMOTE_ADDRESS",
  "DISCO_ENABLE_KVSTORE_FILTER",
  "DISCO_ENABLE_RPC_FILTER",
  "TERMINATION_DRAIN_DURATION_SECONDS",
  "POD_NAME",
  "POD_NAMESPACE",
  "MESH_GPRC_MAXRECVMSGSIZE",
  "MESH_GPRC_MAXSTREAMS",
  "DISCO_CERT_DIR",
  "DISCO_CERT_PROVIDER",
  "DISCO_SKIP_VALIDATE_TRUST_DOMAIN",
  "DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES",
  "DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS",
  "DISCO_FILTER_GATEWAY_CLUSTER_CONFIG",
  "DISCO_RESPECT_DNS_TTL",
  "DISCO_SCOPE_GATEWAY_TO_NAMESPACE",
  "DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING",
  "DISCO_DISTRIBUTION_HISTORY_RETENTION",
  "DISCO_DEBUG_ADSZ_CONFIG",
];
const OUT = join(ROOT, "build", "out");
const DOC = readFileSync(join(ROOT, "docs", "daemon-reference.md"), "utf8");

function run(bin: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [join(OUT, `${bin}.mjs`), ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 600_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The rows of one `## <title>` section of the doc. */
function section(title: string): string {
  const start = DOC.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `docs/daemon-reference.md has a section ${title}`);
  const end = DOC.indexOf("\n## ", start + 1);
  return DOC.slice(start, end < 0 ? undefined : end);
}

/** A non-default value for an entry: what a user would give to ask for the feature. */
function nonDefault(e: NotApplicable): string {
  if (e.type === "bool") return e.default === "true" ? "false" : "true";
  return e.default === "" ? "x" : `${e.default}1`;
}

describe("docs/daemon-reference.md and the code agree", async () => {
  const flagSections: Array<[string, readonly NotApplicable[]]> = [
    ["disco-agent", AGENT_NOT_APPLICABLE_FLAGS],
    ["mesh_ca", ANCHOR_NOT_APPLICABLE_FLAGS],
    ["hubs", HUB_NOT_APPLICABLE_FLAGS],
    ["disco-discovery", DISCOVERY_NOT_APPLICABLE_FLAGS],
  ];
  for (const [title, entries] of flagSections) {
    it(`every not-applicable flag of ${title} is in its section with the program's reason, and no other row says not applicable`, async () => {
      const text = section(title);
      for (const e of entries) assert.ok(text.includes(`| \`${e.name}\` | not applicable | ${e.reason}`), `${title}: ${e.name}`);
      const documented = [...text.matchAll(/^\| `([^`]+)` \| not applicable \|/gm)].map((m) => m[1]).sort();
      const extra = title === "disco-agent" ? ["--concurrency"] : [];
      assert.deepEqual(documented, [...entries.map((e) => e.name), ...extra].sort());
    });
  }

  it("every not-applicable variable is in the environment table, under its daemon", async () => {
    const text = section("Environment variables");
    const column = (name: string, index: number) => {
      const lines = text.split("\n");
      // Exactly the name, else a row naming several (`A / B`, `A, B`).
      const row =
        lines.find((l) => l.startsWith(`| \`${name}\` |`)) ??
        lines.find((l) => (l.split("|")[1] ?? "").split(/ \/ |, /).some((n) => n.replace(/`/g, "").trim() === name));
      assert.ok(row, `a row for ${name}`);
      return row.split("|")[index].trim();
    };
    for (const e of AGENT_NOT_APPLICABLE_ENV) assert.equal(column(e.name, 3), "not applicable", e.name);
    for (const e of ANCHOR_NOT_APPLICABLE_ENV) assert.equal(column(e.name, 4), "not applicable", e.name);
    for (const e of HUB_NOT_APPLICABLE_ENV) assert.equal(column(e.name, 5), "not applicable", e.name);
    for (const name of [
      "CA_ADDR",
      "TRUST_DOMAIN",
      "SECRET_TTL",
      "SECRET_GRACE_DURATION",
      "INITIAL_BACKOFF_MSEC",
      "OUTPUT_KEY_CERT_TO_DIRECTORY",
      "PKCS8_KEY",
      "MESH_CONFIG",
    ])
      assert.equal(column(name, 3), "yes", name);
    for (const e of DISCOVERY_NOT_APPLICABLE_ENV) {
      assert.equal(column(e.name, 6), "not applicable", e.name);
      assert.ok(column(e.name, 7).includes(`disco-discovery: ${e.reason}`), `${e.name}: the program's reason`);
    }
    for (const name of DISCOVERY_VARIABLES) assert.equal(column(name, 6), "yes", name);
  });

  it("every variable spec 2 lists for disco-discovery (DI) has its decision in the disco-discovery column", async () => {
    const rows = section("Environment variables")
      .split("\n")
      .filter((l) => /^\| `/.test(l));
    const di = rows.filter((l) =>
      l
        .split("|")[2]
        .split(",")
        .map((b) => b.trim())
        .includes("DI"),
    );
    // Spec 2: the 34 shared discovery-behaviour variables and 23 other variables naming DI.
    assert.equal(di.length, 57, `${di.length} DI rows`);
    for (const row of di) assert.match(row.split("|")[6].trim(), /^(yes|not applicable|not read)$/, row);
    for (const row of rows.filter((l) => !di.includes(l))) assert.equal(row.split("|")[6].trim(), "—", row);
  });
});

describe("not-applicable flags and variables are refused by the real programs", async () => {
  const empty = tempDir("daemon-ref-");
  // Each program once per entry would take minutes on a loaded machine: a sample per kind and program.
  const flagCases: Array<[string, string[], NotApplicable]> = [
    ["disco-agent", ["proxy"], AGENT_NOT_APPLICABLE_FLAGS.find((e) => e.name === "--customConfigFile")!],
    ["disco-agent", ["proxy"], AGENT_NOT_APPLICABLE_FLAGS.find((e) => e.name === "--tracerBSecure")!],
    ["hubs", ["server"], HUB_NOT_APPLICABLE_FLAGS.find((e) => e.name === "--numCheckCacheEntries")!],
    ["mesh_ca", [], ANCHOR_NOT_APPLICABLE_FLAGS.find((e) => e.name === "--custom-dns-names")!],
  ];
  for (const [bin, sub, e] of flagCases) {
    it(`${bin} ${sub.join(" ")} ${e.name} ${nonDefault(e)}: exit 2, one line with the reason`, async () => {
      const r = run(bin, [...sub, `${e.name}=${nonDefault(e)}`]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stderr, `${[bin, ...sub].join(" ")}: ${e.name}: not applicable here: ${e.reason} (docs/daemon-reference.md)\n`);
      assert.equal(r.stdout, "");
    });
  }

  const envCases: Array<[string, string[], NotApplicable]> = [
    ["disco-agent", ["proxy", "--configDir", empty], AGENT_NOT_APPLICABLE_ENV.find((e) => e.name === "SDS_ENABLED")!],
    ["disco-agent", ["proxy", "--configDir", empty], AGENT_NOT_APPLICABLE_ENV.find((e) => e.name === "DISCO_PUSH_THROTTLE")!],
    ["hubs", ["server"], HUB_NOT_APPLICABLE_ENV.find((e) => e.name === "ORCHCONFIG")!],
    ["mesh_ca", ["--self-signed-ca"], ANCHOR_NOT_APPLICABLE_ENV.find((e) => e.name === "ANCHOR_ENABLE_NAMESPACES_BY_DEFAULT")!],
    ["disco-discovery", ["discovery", "--configDir", empty], DISCOVERY_NOT_APPLICABLE_ENV.find((e) => e.name === "DISCO_ENABLE_TCP_METADATA_EXCHANGE")!],
    ["disco-discovery", ["discovery", "--configDir", empty], DISCOVERY_NOT_APPLICABLE_ENV.find((e) => e.name === "TOKEN_ISSUER")!],
  ];
  for (const [bin, args, e] of envCases) {
    it(`${bin} with ${e.name}=${nonDefault(e)}: exit 2 naming the variable and the reason`, async () => {
      const r = run(bin, args, { [e.name]: nonDefault(e) });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`^${bin}[^:]*: ${e.name}="${nonDefault(e)}": not applicable here: `));
      assert.ok(r.stderr.includes(e.reason), r.stderr);
      assert.equal(r.stderr.split("\n").length, 2, r.stderr);
    });
  }

  it("a default value is accepted: the program goes on to its next check", async () => {
    // --customConfigFile "" is the spec default; the run then stops at the missing --configDir.
    const r = run("disco-agent", ["proxy", "--customConfigFile=", "--tracerBSecure=false", "--configDir", join(empty, "missing")], { SDS_ENABLED: "false" });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--configDir: expected an existing directory/);
    assert.doesNotMatch(r.stderr, /not applicable/);
    const disco = run("disco-discovery", ["discovery"], {
      DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND: "false",
      JWT_POLICY: "third-party-jwt",
      ORCH_SERVICE_HOST: "10.96.0.1",
    });
    assert.equal(disco.status, 2);
    assert.match(disco.stderr, /--configDir: expected the directory/);
    const badValue = run("disco-discovery", ["discovery", "--configDir", empty], { DISCO_PUSH_THROTTLE: "0" });
    assert.equal(badValue.status, 2);
    assert.equal(badValue.stderr, 'disco-discovery discovery: DISCO_PUSH_THROTTLE="0": expected an integer from 1 to 9007199254740991\n');
    const hub = run("hubs", ["server", "--singleThreaded", "true", "--configStoreURL", "mcps://x"]);
    assert.equal(hub.status, 2);
    assert.match(hub.stderr, /^hubs server: --configStoreURL "mcps:\/\/x": this hub supports fs:\/\/DIR only/);
  });
});
