// The capture rule set against upstream's istio-iptables golden outputs
// (tools/istio-iptables/pkg/capture/testdata, REDIRECT mode), renamed
// ISTIO_* → MESH_*; and the flag decoding of `disco-agent mesh-iptables`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CaptureFlagError, type RawCaptureFlags, decodeCaptureOptions } from "../../host/capture/capture_options.ts";
import { cleanupInput, restoreInput } from "../../host/capture/iptables_rules.ts";

const options = (flags: RawCaptureFlags, env: NodeJS.ProcessEnv = {}) => decodeCaptureOptions(flags, env, () => undefined);
const rules = (flags: RawCaptureFlags, env?: NodeJS.ProcessEnv) => restoreInput(options(flags, env));

const CHAINS = ["* nat", "-N MESH_INBOUND", "-N MESH_REDIRECT", "-N MESH_IN_REDIRECT", "-N MESH_OUTPUT"];
const REDIRECTS = [
  "-A MESH_INBOUND -p tcp --dport 15008 -j RETURN",
  "-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001",
  "-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006",
];
/** Upstream's owner rules for uid and gid 1337, and the explicit localhost return. */
const OWNER_1337 = [
  "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
  "-A MESH_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --uid-owner 1337 -j MESH_IN_REDIRECT",
  "-A MESH_OUTPUT -o lo -m owner ! --uid-owner 1337 -j RETURN",
  "-A MESH_OUTPUT -m owner --uid-owner 1337 -j RETURN",
  "-A MESH_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --gid-owner 1337 -j MESH_IN_REDIRECT",
  "-A MESH_OUTPUT -o lo -m owner ! --gid-owner 1337 -j RETURN",
  "-A MESH_OUTPUT -m owner --gid-owner 1337 -j RETURN",
  "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
];
const doc = (...lines: string[]) => [...CHAINS, ...lines, "COMMIT", ""].join("\n");

describe("capture rules: upstream's golden shapes", () => {
  it("the injector's arguments (-i * -x '' -b * -d 15090,15021,15020): every port in and out, the proxy's ports excluded", () => {
    assert.equal(
      rules({
        envoyPort: "15001",
        inboundCapturePort: "15006",
        proxyUid: "1337",
        meshInboundInterceptionMode: "REDIRECT",
        meshServiceCidr: "*",
        meshServiceExcludeCidr: "",
        meshInboundPorts: "*",
        meshLocalExcludePorts: "15090,15021,15020",
      }),
      doc(
        ...REDIRECTS,
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 15090 -j RETURN",
        "-A MESH_INBOUND -p tcp --dport 15021 -j RETURN",
        "-A MESH_INBOUND -p tcp --dport 15020 -j RETURN",
        "-A MESH_INBOUND -p tcp -j MESH_IN_REDIRECT",
        "-A OUTPUT -j MESH_OUTPUT",
        ...OWNER_1337,
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ),
    );
  });

  it("inbound-ports-wildcard: -b * alone captures inbound, nothing outbound", () => {
    assert.equal(
      rules({ meshInboundPorts: "*" }),
      doc(...REDIRECTS, "-A PREROUTING -p tcp -j MESH_INBOUND", "-A MESH_INBOUND -p tcp -j MESH_IN_REDIRECT", "-A OUTPUT -j MESH_OUTPUT", ...OWNER_1337),
    );
  });

  it("inbound-ports-include: listed ports only (the exclusions apply to * alone)", () => {
    assert.equal(
      rules({ meshInboundPorts: "32000,31000", meshLocalExcludePorts: "22" }),
      doc(
        ...REDIRECTS,
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 32000 -j MESH_IN_REDIRECT",
        "-A MESH_INBOUND -p tcp --dport 31000 -j MESH_IN_REDIRECT",
        "-A OUTPUT -j MESH_OUTPUT",
        ...OWNER_1337,
      ),
    );
  });

  it("outbound-ports-include and -exclude: -q after the localhost return, -o (tcp and udp) before the owner rules", () => {
    assert.equal(
      rules({ meshOutboundPorts: "32000,31000" }),
      doc(
        ...REDIRECTS,
        "-A OUTPUT -j MESH_OUTPUT",
        ...OWNER_1337,
        "-A MESH_OUTPUT -p tcp --dport 32000 -j MESH_REDIRECT",
        "-A MESH_OUTPUT -p tcp --dport 31000 -j MESH_REDIRECT",
      ),
    );
    assert.equal(
      rules({ meshLocalOutboundPortsExclude: "22" }),
      doc(...REDIRECTS, "-A OUTPUT -j MESH_OUTPUT", "-A MESH_OUTPUT -p tcp --dport 22 -j RETURN", "-A MESH_OUTPUT -p udp --dport 22 -j RETURN", ...OWNER_1337),
    );
  });

  it("ipnets: listed ranges captured, excluded ranges returned first", () => {
    assert.equal(
      rules({ meshServiceCidr: "10.0.0.0/8", meshServiceExcludeCidr: "10.96.0.0/16, 10.97.0.0/16" }),
      doc(
        ...REDIRECTS,
        "-A OUTPUT -j MESH_OUTPUT",
        ...OWNER_1337,
        "-A MESH_OUTPUT -d 10.96.0.0/16 -j RETURN",
        "-A MESH_OUTPUT -d 10.97.0.0/16 -j RETURN",
        "-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT",
      ),
    );
  });

  it("loopback-outbound-iprange: a loopback range to capture drops the app → app over lo return", () => {
    const out = rules({ meshServiceCidr: "127.1.2.3/32" });
    assert.ok(!out.includes("! --uid-owner"), out);
    assert.ok(!out.includes("! --gid-owner"), out);
    assert.ok(out.endsWith("-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN\n-A MESH_OUTPUT -d 127.1.2.3/32 -j MESH_REDIRECT\nCOMMIT\n"), out);
  });

  it("kube-virt-interfaces: the VM's interfaces skip inbound capture and are redirected as outbound (inserted first)", () => {
    assert.equal(
      rules({ kubeVirtInterfaces: "eth1,eth2", meshServiceCidr: "*" }),
      doc(
        "-I PREROUTING 1 -i eth1 -j RETURN",
        "-I PREROUTING 1 -i eth2 -j RETURN",
        ...REDIRECTS,
        "-A OUTPUT -j MESH_OUTPUT",
        ...OWNER_1337,
        "-A MESH_OUTPUT -j MESH_REDIRECT",
        "-I PREROUTING 1 -i eth1 -j MESH_REDIRECT",
        "-I PREROUTING 1 -i eth2 -j MESH_REDIRECT",
      ),
    );
    assert.equal(
      rules({ kubeVirtInterfaces: "eth1,eth2", meshServiceCidr: "10.0.0.0/8" }),
      doc(
        "-I PREROUTING 1 -i eth1 -j RETURN",
        "-I PREROUTING 1 -i eth2 -j RETURN",
        ...REDIRECTS,
        "-A OUTPUT -j MESH_OUTPUT",
        ...OWNER_1337,
        "-I PREROUTING 1 -i eth1 -d 10.0.0.0/8 -j MESH_REDIRECT",
        "-I PREROUTING 1 -i eth2 -d 10.0.0.0/8 -j MESH_REDIRECT",
        "-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT",
      ),
    );
  });

  it("basic-exclude-nic: an excluded interface returns both ways, before everything", () => {
    assert.equal(
      rules({ meshExcludeInterfaces: "not-mesh-nic" }),
      doc("-A PREROUTING -i not-mesh-nic -j RETURN", "-A OUTPUT -o not-mesh-nic -j RETURN", ...REDIRECTS, "-A OUTPUT -j MESH_OUTPUT", ...OWNER_1337),
    );
  });

  it("uid-gid: several proxy users and groups, each with its three rules; ports and the tunnel port as given", () => {
    const out = rules({ proxyUid: "3,4", proxyGid: "1,2", envoyPort: "16001", inboundCapturePort: "16006", inboundTunnelPort: "16008" });
    for (const [kind, id] of [
      ["uid", "3"],
      ["uid", "4"],
      ["gid", "1"],
      ["gid", "2"],
    ])
      assert.ok(
        out.includes(
          `-A MESH_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 16008 -m owner --${kind}-owner ${id} -j MESH_IN_REDIRECT\n-A MESH_OUTPUT -o lo -m owner ! --${kind}-owner ${id} -j RETURN\n-A MESH_OUTPUT -m owner --${kind}-owner ${id} -j RETURN\n`,
        ),
        out,
      );
    assert.ok(
      out.includes(
        "-A MESH_INBOUND -p tcp --dport 16008 -j RETURN\n-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 16001\n-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 16006\n",
      ),
      out,
    );
  });

  it("the proxy uid defaults to $ENVOY_USER's, else 1337; the gid to the uid", () => {
    assert.deepEqual(options({}).proxyUids, ["1337"]);
    const o = decodeCaptureOptions({}, { ENVOY_USER: "envoy" }, (user) => (user === "envoy" ? "101" : undefined));
    assert.deepEqual([o.proxyUids, o.proxyGids], [["101"], ["101"]]);
    assert.deepEqual(options({ proxyUid: "1337", proxyGid: "1338" }).proxyGids, ["1338"]);
    assert.deepEqual([options({ proxyUid: "", proxyGid: "" }).proxyUids, options({ proxyUid: "7", proxyGid: "" }).proxyGids], [["1337"], ["7"]]);
  });
});

describe("mesh-iptables flags and variables", () => {
  it("a flag not given takes its variable (long name upper-cased, - → _), the flag wins; -p has none", () => {
    const o = options(
      { inboundCapturePort: "16006" },
      { INBOUND_CAPTURE_PORT: "17006", MESH_INBOUND_PORTS: "*", MESH_SERVICE_CIDR: "10.0.0.0/8", PROXY_UID: "7", ENVOY_PORT: "9" },
    );
    assert.equal(o.inboundCapturePort, 16006);
    assert.equal(o.inboundPorts, "*");
    assert.deepEqual(o.outboundRanges, [{ cidr: "10.0.0.0/8", loopback: false }]);
    assert.deepEqual(o.proxyUids, ["7"]);
    assert.equal(o.proxyPort, 15001);
    assert.equal(options({}, { DRY_RUN: "true" }).dryRun, true);
  });

  for (const [flags, env, named] of [
    [{ envoyPort: "0" }, {}, "-p/--envoy-port"],
    [{ meshLocalExcludePorts: "15090,x" }, {}, "-d/--mesh-local-exclude-ports"],
    [{ meshServiceCidr: "10.0.0.0" }, {}, "-i/--mesh-service-cidr"],
    [{ meshServiceCidr: "fd00::/8" }, {}, "-i/--mesh-service-cidr"],
    [{ meshServiceExcludeCidr: "*" }, {}, "-x/--mesh-service-exclude-cidr"],
    [{ meshInboundInterceptionMode: "TPROXY" }, {}, "-m/--mesh-inbound-interception-mode"],
    [{ meshInboundInterceptionMode: "redirect" }, {}, "-m/--mesh-inbound-interception-mode"],
    [{ proxyUid: "mesh-proxy" }, {}, "-u/--proxy-uid"],
    [{ meshExcludeInterfaces: "eth0 eth1" }, {}, "-c/--mesh-exclude-interfaces"],
    [{}, { MESH_OUTBOUND_PORTS: "http" }, "-q/--mesh-outbound-ports (from MESH_OUTBOUND_PORTS)"],
    [{}, { CLEANUP_ONLY: "yes" }, "--cleanup-only (from CLEANUP_ONLY)"],
  ] as Array<[RawCaptureFlags, NodeJS.ProcessEnv, string]>) {
    it(`a bad value names ${named}`, () => {
      assert.throws(
        () => options(flags, env),
        (e: Error) => e instanceof CaptureFlagError && e.message.startsWith(named),
      );
    });
  }

  it("TPROXY is refused with the reason", () => {
    assert.throws(() => options({ meshInboundInterceptionMode: "TPROXY" }), /TPROXY is not supported: .*IP_TRANSPARENT.*use REDIRECT/);
  });
});

describe("cleanup input", () => {
  const flags: RawCaptureFlags = { meshInboundPorts: "*", meshServiceCidr: "*", meshExcludeInterfaces: "eth7", kubeVirtInterfaces: "vm0" };

  it("without the saved table (dry run): every built-in chain rule the options add, then the chains flushed and deleted", () => {
    assert.equal(
      cleanupInput(options(flags)),
      [
        "* nat",
        "-D PREROUTING -i eth7 -j RETURN",
        "-D OUTPUT -o eth7 -j RETURN",
        "-D PREROUTING -i vm0 -j RETURN",
        "-D PREROUTING -p tcp -j MESH_INBOUND",
        "-D OUTPUT -j MESH_OUTPUT",
        "-D PREROUTING -i vm0 -j MESH_REDIRECT",
        ...["-F", "-X"].flatMap((op) => ["MESH_INBOUND", "MESH_REDIRECT", "MESH_IN_REDIRECT", "MESH_OUTPUT"].map((c) => `${op} ${c}`)),
        "COMMIT",
        "",
      ].join("\n"),
    );
  });

  it("from iptables-save: only what is there, the jumps as saved, other rules left alone", () => {
    const saved = [
      "*nat",
      ":PREROUTING ACCEPT [0:0]",
      ":OUTPUT ACCEPT [0:0]",
      ":MESH_OUTPUT - [0:0]",
      ":MESH_REDIRECT - [0:0]",
      "-A PREROUTING -i eth9 -j RETURN",
      "-A OUTPUT -o eth7 -j RETURN",
      "-A OUTPUT -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.0.0.1",
      "-A OUTPUT -j MESH_OUTPUT",
      "-A MESH_OUTPUT -j MESH_REDIRECT",
      "COMMIT",
    ].join("\n");
    assert.equal(
      cleanupInput(options(flags), saved),
      [
        "* nat",
        "-D OUTPUT -j MESH_OUTPUT",
        "-D OUTPUT -o eth7 -j RETURN",
        "-F MESH_REDIRECT",
        "-F MESH_OUTPUT",
        "-X MESH_REDIRECT",
        "-X MESH_OUTPUT",
        "COMMIT",
        "",
      ].join("\n"),
    );
    assert.equal(cleanupInput(options(flags), "*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n"), undefined);
  });
});
