import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OFFLINE, analyze, codes } from "./analyze_support.ts";

// Golden pairs under fixtures/analyze/: for each analyzer a minimal bad example
// that fires with its codes, and a good twin that stays silent. Runs meshctl's
// command line in-process (test/cli/in_process.ts).
const CASES: Array<{ analyzer: string; bad: string[]; codes: string[]; good: string }> = [
  { analyzer: "schema", bad: ["schema.bad.yaml"], codes: ["MSH0106", "MSH0133"], good: "schema.good.yaml" },
  { analyzer: "regex", bad: ["regex.bad.yaml"], codes: ["MSH0122"], good: "regex.good.yaml" },
  { analyzer: "virtualservice-destination-labels", bad: ["virtualservice-destination-labels.bad.yaml"], codes: ["MSH0220"], good: "virtualservice-destination-labels.good.yaml" },
  { analyzer: "peerauthentication-destinationrule (rule 5)", bad: ["peerauthentication-destinationrule.strict.bad.yaml"], codes: ["MSH0201"], good: "peerauthentication-destinationrule.good.yaml" },
  { analyzer: "peerauthentication-destinationrule (conflict)", bad: ["peerauthentication-destinationrule.conflict.bad.yaml"], codes: ["MSH0113"], good: "peerauthentication-destinationrule.good.yaml" },
  { analyzer: "peerauthentication-destinationrule (rule 7)", bad: ["peerauthentication-destinationrule.disable.bad.yaml"], codes: ["MSH0202"], good: "peerauthentication-destinationrule.good.yaml" },
  { analyzer: "peerauthentication-port-level-mtls", bad: ["peerauthentication-port-level-mtls.bad.yaml"], codes: ["MSH0203"], good: "peerauthentication-port-level-mtls.good.yaml" },
  { analyzer: "peerauthentication-root-selector", bad: ["peerauthentication-root-selector.bad.yaml"], codes: ["MSH0206"], good: "peerauthentication-root-selector.good.yaml" },
  { analyzer: "policy-workload-selector", bad: ["policy-workload-selector.bad.yaml"], codes: ["MSH0127", "MSH0127"], good: "policy-workload-selector.good.yaml" },
  { analyzer: "gateway-policy-namespace", bad: ["gateway-policy-namespace.bad.yaml"], codes: ["MSH0205"], good: "gateway-policy-namespace.good.yaml" },
  { analyzer: "gateway-selector", bad: ["gateway-selector.bad.yaml"], codes: ["MSH0101"], good: "gateway-selector.good.yaml" },
  { analyzer: "destinationrule-host", bad: ["destinationrule-host.bad.yaml"], codes: ["MSH0204"], good: "destinationrule-host.good.yaml" },
  { analyzer: "virtualservice-gateways", bad: ["virtualservice-gateways.bad.yaml"], codes: ["MSH0101"], good: "virtualservice-gateways.good.yaml" },
  { analyzer: "virtualservice-destinations", bad: ["virtualservice-destinations.bad.yaml"], codes: ["MSH0101", "MSH0101", "MSH0112", "MSH0101"], good: "virtualservice-destinations.good.yaml" },
  { analyzer: "binding-references", bad: ["binding-references.bad.yaml"], codes: ["MSH0101", "MSH0101"], good: "binding-references.good.yaml" },
  { analyzer: "spec-binding-overlap", bad: ["spec-binding-overlap.bad.yaml"], codes: ["MSH0210", "MSH0210", "MSH0211"], good: "spec-binding-overlap.good.yaml" },
  { analyzer: "namespace-references", bad: ["namespace-references.bad.yaml"], codes: ["MSH0101"], good: "namespace-references.good.yaml" },
  { analyzer: "namespace-injection", bad: ["namespace-injection.bad.yaml"], codes: ["MSH0102"], good: "namespace-injection.good.yaml" },
  { analyzer: "gateway-port", bad: ["gateway-port.bad.yaml"], codes: ["MSH0104"], good: "gateway-port.good.yaml" },
  { analyzer: "conflicting-gateways", bad: ["conflicting-gateways.bad.yaml"], codes: ["MSH0145"], good: "conflicting-gateways.good.yaml" },
  { analyzer: "virtualservice-gateway-hosts", bad: ["virtualservice-gateway-hosts.bad.yaml"], codes: ["MSH0132"], good: "virtualservice-gateway-hosts.good.yaml" },
  { analyzer: "conflicting-mesh-virtualservice-hosts", bad: ["conflicting-mesh-virtualservice-hosts.bad.yaml"], codes: ["MSH0109", "MSH0109"], good: "conflicting-mesh-virtualservice-hosts.good.yaml" },
  { analyzer: "destinationrule-subsets", bad: ["destinationrule-subsets.bad.yaml"], codes: ["MSH0230"], good: "destinationrule-subsets.good.yaml" },
  { analyzer: "destinationrule-tls-verification", bad: ["destinationrule-tls-verification.bad.yaml"], codes: ["MSH0128", "MSH0129"], good: "destinationrule-tls-verification.good.yaml" },
  { analyzer: "service-port-name", bad: ["service-port-name.bad.yaml"], codes: ["MSH0118"], good: "service-port-name.good.yaml" },
];

describe("meshctl analyze: each analyzer on its golden pair", async () => {
  for (const c of CASES) {
    it(`${c.analyzer}: fires ${c.codes.join(", ")} on the bad example`, async () => {
      const run = await analyze([OFFLINE, "-A", "-o", "json", "--failure-threshold", "Info", ...c.bad.map((f) => `analyze/${f}`)]);
      assert.deepEqual(codes(run), c.codes, run.stdout + run.stderr);
      assert.equal(run.status, 79, run.stderr);
    });
    it(`${c.analyzer}: silent on the good twin`, async () => {
      const run = await analyze([OFFLINE, "-A", "-o", "json", "--failure-threshold", "Info", `analyze/${c.good}`]);
      assert.deepEqual(codes(run), [], run.stdout);
      assert.equal(run.status, 0, run.stderr);
    });
  }

  it("every code -L lists is exercised by a bad example", async () => {
    const listed = [...(await analyze(["-L"])).stdout.matchAll(/\b(MSH\d{4})\b/g)].map((m) => m[1]);
    const fired = new Set(CASES.flatMap((c) => c.codes));
    assert.ok(listed.length >= 17);
    assert.deepEqual([...new Set(listed)].filter((code) => !fired.has(code)), []);
  });

  it("messages name the resource and file:line of the offending field", async () => {
    const run = await analyze([OFFLINE, "analyze/virtualservice-gateways.bad.yaml"]);
    assert.equal(
      run.stdout,
      'Error [MSH0101] (VirtualService default/bookinfo analyze/virtualservice-gateways.bad.yaml:14) Referenced gateway not found: "default/bookinfo-gateway"\n',
    );
  });
});
