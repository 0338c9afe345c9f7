// `disco-agent mesh-iptables` (the built program) in a real network
// namespace: the rules it applies are those iptables-save shows, a second
// run replaces them, --cleanup-only leaves nothing, the rest of the table is
// untouched; errors exit 2 (flags) and 1 (iptables) with one line.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createNamespace, deleteNamespace, inNamespace, namespaceExists } from "./netns_fixture.ts";

const AGENT = join(import.meta.dirname, "..", "..", "build", "out", "disco-agent.mjs");
/** What orch-inject's init container runs (the MESH24 injection contract), plus an excluded interface to clean up. */
const INJECTED = ["-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020", "-c", "eth7"];

/** `disco-agent mesh-iptables ARGS`, in the namespace when one is given, as the user `asUser` when given. */
function agent(ns: string | undefined, args: string[], asUser?: number) {
  const program = [
    ...(asUser === undefined ? [] : ["setpriv", `--reuid=${asUser}`, `--regid=${asUser}`, "--clear-groups"]),
    process.execPath,
    AGENT,
    "mesh-iptables",
    ...args,
  ];
  const argv = ns ? ["ip", "netns", "exec", ns, ...program] : program;
  const r = spawnSync(argv[0], argv.slice(1), { encoding: "utf8", timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The nat table's rules and chains as iptables-save prints them (no comments, no counters). */
function natTable(ns: string): string[] {
  return inNamespace(ns, "iptables-save", ["-t", "nat"])
    .split("\n")
    .filter((l) => l.startsWith("-") || l.startsWith(":"))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ""));
}

describe("mesh-iptables in a network namespace", () => {
  let ns: string;
  before(() => {
    ns = createNamespace("ipt");
  });
  after(() => {
    deleteNamespace(ns);
    assert.ok(!namespaceExists(ns), `${ns} removed`);
  });

  it("applies the injector's rules with iptables-restore --noflush, keeping the table's other rules", () => {
    inNamespace(ns, "iptables", ["-t", "nat", "-A", "OUTPUT", "-d", "192.0.2.1/32", "-j", "RETURN"]);
    const r = agent(ns, INJECTED);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(natTable(ns), [
      ":PREROUTING ACCEPT",
      ":INPUT ACCEPT",
      ":OUTPUT ACCEPT",
      ":POSTROUTING ACCEPT",
      ":MESH_INBOUND -",
      ":MESH_IN_REDIRECT -",
      ":MESH_OUTPUT -",
      ":MESH_REDIRECT -",
      "-A PREROUTING -i eth7 -j RETURN",
      "-A PREROUTING -p tcp -j MESH_INBOUND",
      "-A OUTPUT -d 192.0.2.1/32 -j RETURN",
      "-A OUTPUT -o eth7 -j RETURN",
      "-A OUTPUT -j MESH_OUTPUT",
      "-A MESH_INBOUND -p tcp -m tcp --dport 15008 -j RETURN",
      "-A MESH_INBOUND -p tcp -m tcp --dport 15090 -j RETURN",
      "-A MESH_INBOUND -p tcp -m tcp --dport 15021 -j RETURN",
      "-A MESH_INBOUND -p tcp -m tcp --dport 15020 -j RETURN",
      "-A MESH_INBOUND -p tcp -j MESH_IN_REDIRECT",
      "-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006",
      "-A MESH_OUTPUT -s 127.0.0.6/32 -o lo -j RETURN",
      "-A MESH_OUTPUT ! -d 127.0.0.1/32 -o lo -p tcp -m tcp ! --dport 15008 -m owner --uid-owner 1337 -j MESH_IN_REDIRECT",
      "-A MESH_OUTPUT -o lo -m owner ! --uid-owner 1337 -j RETURN",
      "-A MESH_OUTPUT -m owner --uid-owner 1337 -j RETURN",
      "-A MESH_OUTPUT ! -d 127.0.0.1/32 -o lo -p tcp -m tcp ! --dport 15008 -m owner --gid-owner 1337 -j MESH_IN_REDIRECT",
      "-A MESH_OUTPUT -o lo -m owner ! --gid-owner 1337 -j RETURN",
      "-A MESH_OUTPUT -m owner --gid-owner 1337 -j RETURN",
      "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      "-A MESH_OUTPUT -j MESH_REDIRECT",
      "-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001",
    ]);
  });

  it("a second run replaces the rules (one set, the new ports)", () => {
    const r = agent(ns, [...INJECTED.slice(4), "-p", "16001"]);
    assert.equal(r.status, 0, r.stderr);
    const table = natTable(ns);
    assert.equal(table.filter((l) => l === "-A OUTPUT -j MESH_OUTPUT").length, 1, table.join("\n"));
    assert.equal(table.filter((l) => l === "-A PREROUTING -i eth7 -j RETURN").length, 1, table.join("\n"));
    assert.ok(table.includes("-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 16001"), table.join("\n"));
    assert.ok(!table.some((l) => l.includes("--to-ports 15001")), table.join("\n"));
  });

  it("--cleanup-only removes every rule and chain it made, and nothing else; twice is fine", () => {
    const r = agent(ns, ["--cleanup-only", "-c", "eth7"]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(natTable(ns), [":PREROUTING ACCEPT", ":INPUT ACCEPT", ":OUTPUT ACCEPT", ":POSTROUTING ACCEPT", "-A OUTPUT -d 192.0.2.1/32 -j RETURN"]);
    const again = agent(ns, ["--cleanup-only"]);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /no capture rules to remove/);
  });

  it("-n prints the iptables-restore input and applies nothing", () => {
    const r = agent(ns, [...INJECTED, "-n"]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.startsWith("* nat\n-N MESH_INBOUND\n"), r.stdout);
    assert.ok(r.stdout.endsWith("-A MESH_OUTPUT -j MESH_REDIRECT\nCOMMIT\n"), r.stdout);
    assert.ok(!natTable(ns).some((l) => l.includes("MESH_")));
    // The input is what iptables-restore takes.
    inNamespace(ns, "iptables-restore", ["--noflush"], r.stdout);
    assert.ok(natTable(ns).includes("-A OUTPUT -j MESH_OUTPUT"));
    assert.equal(agent(ns, ["--cleanup-only", "-c", "eth7"]).status, 0);
  });

  it("a bad flag exits 2 with one line naming it; TPROXY is refused with the reason", () => {
    for (const [args, flag] of [
      [["-b", "80,http"], "-b/--mesh-inbound-ports"],
      [["-m", "TPROXY"], "-m/--mesh-inbound-interception-mode"],
      [["--no-such-flag"], "--no-such-flag"],
    ] as const) {
      const r = agent(undefined, [...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stderr.split("\n").length, 2, r.stderr);
      assert.ok(r.stderr.includes(flag), r.stderr);
    }
    assert.match(agent(undefined, ["-m", "TPROXY"]).stderr, /TPROXY is not supported/);
  });

  it("iptables failing (not root) exits 1 naming what failed, and changes nothing", () => {
    const r = agent(ns, ["-i", "*"], 65534);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^disco-agent mesh-iptables: iptables-save -t nat: exit \d+: .*/);
    assert.ok(!natTable(ns).some((l) => l.includes("MESH_")));
  });
});
