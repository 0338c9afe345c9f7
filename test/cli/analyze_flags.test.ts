import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FIXTURES, assertGolden } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";
import { OFFLINE, analyze, codes } from "./analyze_support.ts";

const INFO_ONLY = "analyze/namespace-injection.bad.yaml"; // MSH0102 Info
const WARNING_ONLY = "analyze/peerauthentication-root-selector.bad.yaml"; // MSH0906 Warning
const ERROR_ONLY = "analyze/regex.bad.yaml"; // MSH0122 Error
const TREE = "analyze/tree";

describe("meshctl analyze: --failure-threshold and exit codes", async () => {
  const table: Array<[string, string | undefined, number]> = [
    [INFO_ONLY, undefined, 0],
    [INFO_ONLY, "Info", 79],
    [INFO_ONLY, "Warn", 0],
    [WARNING_ONLY, undefined, 79],
    [WARNING_ONLY, "info", 79],
    [WARNING_ONLY, "Warning", 79],
    [WARNING_ONLY, "Error", 0],
    [ERROR_ONLY, undefined, 79],
    [ERROR_ONLY, "Error", 79],
    ["analyze/regex.good.yaml", "Info", 0],
  ];
  for (const [file, threshold, status] of table) {
    it(`${file} with --failure-threshold ${threshold ?? "(default Warn)"} exits ${status}`, async () => {
      const run = await analyze([OFFLINE, "-A", file, ...(threshold ? ["--failure-threshold", threshold] : [])]);
      assert.equal(run.status, status, run.stderr);
      if (status === 79) assert.match(run.stderr, /^Error: Analyzers found issues when analyzing all namespaces\.$/m);
      else assert.doesNotMatch(run.stderr, /Analyzers found issues/);
    });
  }

  it("an unknown level is a usage error (exit 2)", async () => {
    const run = await analyze([OFFLINE, ERROR_ONLY, "--failure-threshold", "Fatal"]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /expected one of Info, Warn, Error/);
  });
});

describe("meshctl analyze: --output-threshold", async () => {
  it("hides messages below it; the exit code still follows --failure-threshold", async () => {
    const run = await analyze([OFFLINE, "-A", WARNING_ONLY, "--output-threshold", "Error"]);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /✔ No validation issues found when analyzing all namespaces \(1 below --output-threshold Error\)\./);
    assert.equal(run.status, 79);
  });

  it("Warn drops Info lines", async () => {
    const run = await analyze([OFFLINE, "-A", "-R", TREE, "--output-threshold", "Warn"]);
    assert.deepEqual(
      run.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split(" ")[0]),
      ["Error", "Warning", "Warning"],
    );
  });
});

describe("meshctl analyze: -S/--suppress", async () => {
  const all = async (extra: string[]) => codes(await analyze([OFFLINE, "-A", "-R", "-o", "json", TREE, ...extra]));

  it("suppresses a code on a resource named <Kind> <name>.<namespace> (or as messages print it)", async () => {
    assert.deepEqual(await all([]), ["MSH0101", "MSH0102", "MSH0901", "MSH0127"]);
    assert.deepEqual(await all(["-S", "MSH0101=VirtualService reviews.shop"]), ["MSH0102", "MSH0901", "MSH0127"]);
    assert.deepEqual(await all(["-S", "MSH0127=AuthorizationPolicy shop/deny-anonymous", "-S", "MSH0102=Namespace shop"]), ["MSH0101", "MSH0901"]);
  });

  it("* matches partially", async () => {
    assert.deepEqual(await all(["--suppress", "MSH0901=PeerAuthentication *.shop", "-S", "MSH0101=*"]), ["MSH0102", "MSH0127"]);
    assert.deepEqual(await all(["--suppress", "MSH0901=PeerAuthentication *.shop", "-S", "MSH0101=* *"]), ["MSH0102", "MSH0127"]);
    assert.deepEqual(await all(["-S", "MSH0901=PeerAuthentication rev*.sh*"]), ["MSH0101", "MSH0102", "MSH0127"]);
    assert.deepEqual(await all(["-S", "MSH0901=PeerAuthentication *.other"]), ["MSH0101", "MSH0102", "MSH0901", "MSH0127"]);
  });

  it("a suppressed message no longer fails the run", async () => {
    const run = await analyze([OFFLINE, "-A", WARNING_ONLY, "-S", "MSH0906=PeerAuthentication reviews.mesh-system"]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, "");
  });

  it("warns about an unknown code, refuses a malformed value (exit 2)", async () => {
    const unknown = await analyze([OFFLINE, "-A", INFO_ONLY, "-S", "MSH9999=Namespace foo"]);
    assert.match(unknown.stderr, /^Warning: supplied message code 'MSH9999' is an unknown message code and will not have any effect$/m);
    assert.equal(unknown.status, 0);
    const bad = await analyze([OFFLINE, INFO_ONLY, "-S", "MSH0102"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /is not a valid suppression: expected <code>=<Kind> <name>\.<namespace>/);
  });
});

describe("meshctl analyze: -L/--list-analyzers", async () => {
  it("lists each analyzer with description and codes, and analyzes nothing", async () => {
    const run = await analyze(["-L", "analyze/does-not-exist.yaml"]);
    assert.equal(run.status, 0);
    assert.equal(run.stderr, "");
    assert.match(run.stdout, /^Available analyzers:\n/);
    assert.match(
      run.stdout,
      /^\tvirtualservice-gateways: VirtualServices referring to a Gateway that is not defined \[upstream virtualservice\.GatewayAnalyzer\]$/m,
    );
    assert.match(run.stdout, /^\t\tMSH0101 Error ReferencedResourceNotFound: /m);
    assert.match(run.stdout, /^\t\tMSH0901 Warning StrictWorkloadNeedsDestinationRule \(own\): /m);
    assert.match(run.stdout, /^\t\tMSH0102 Info NamespaceNotInjected: /m);
  });
});

describe("meshctl analyze: output formats", async () => {
  it("-o log, json and yaml are stable (golden)", async () => {
    for (const format of ["log", "json", "yaml"]) {
      const run = await analyze([OFFLINE, "-A", "-R", "-o", format, TREE]);
      assert.equal(run.status, 79, run.stderr);
      assertGolden(run.stdout, `analyze/tree.${format}.golden`);
    }
  });

  it("json: an array of {code, level, origin, reference, message} in that key order; [] when clean", async () => {
    const messages = JSON.parse((await analyze([OFFLINE, "-A", "-R", "-o", "json", TREE])).stdout) as object[];
    for (const m of messages) assert.deepEqual(Object.keys(m), ["code", "level", "origin", "reference", "message"]);
    const clean = await analyze([OFFLINE, "-o", "json", "analyze/regex.good.yaml"]);
    assert.equal(clean.stdout, "[]\n");
    assert.equal((await analyze([OFFLINE, "-o", "yaml", "analyze/regex.good.yaml"])).stdout, "[]\n");
  });

  it("an unknown format is a usage error", async () => {
    assert.equal((await analyze([OFFLINE, "-o", "xml", ERROR_ONLY])).status, 2);
  });
});

describe("meshctl analyze: -R/--recursive", async () => {
  it("reads only a directory's own files without -R, its subdirectories with -R", async () => {
    assert.deepEqual(codes(await analyze([OFFLINE, "-A", "-o", "json", TREE])), ["MSH0101"]);
    assert.deepEqual(codes(await analyze([OFFLINE, "-A", "-o", "json", "--recursive", TREE])), ["MSH0101", "MSH0102", "MSH0901", "MSH0127"]);
  });
});

describe("meshctl analyze: color", async () => {
  const line = (run: { stdout: string }) => run.stdout.split("\n")[0];
  it("is off when stdout is not a terminal, on with --color, off again with TERM=dumb or --color=false", async () => {
    assert.match(line(await analyze([OFFLINE, ERROR_ONLY])), /^Error \[MSH0122\]/);
    assert.match(line(await analyze([OFFLINE, ERROR_ONLY, "--color"])), /^\x1b\[1;31mError\x1b\[0m \[MSH0122\]/);
    assert.match(line(await analyze([OFFLINE, "--color", WARNING_ONLY, "-A"])), /^\x1b\[33mWarning\x1b\[0m \[MSH0906\]/);
    assert.match(line(await analyze([OFFLINE, ERROR_ONLY, "--color"], { env: { TERM: "dumb" } })), /^Error \[MSH0122\]/);
    assert.match(line(await analyze([OFFLINE, ERROR_ONLY, "--color=false"])), /^Error \[MSH0122\]/);
    // json and yaml are never colored
    assert.doesNotMatch((await analyze([OFFLINE, ERROR_ONLY, "--color", "-o", "json"])).stdout, /\x1b/);
  });
});

describe("meshctl analyze: --use-kube", async () => {
  it("left on (the default): a notice on stderr, then the files are analyzed offline", async () => {
    const run = await analyze([ERROR_ONLY]);
    assert.match(
      run.stderr,
      /^meshctl analyze: --use-kube: no orchestrator API is available here, so only the given files are analyzed .*pass --use-kube=false to silence this notice$/m,
    );
    assert.match(run.stdout, /^Error \[MSH0122\]/);
    assert.equal(run.status, 79);
  });

  it("--use-kube=false, -k=false: no notice; -k followed by a file keeps the file", async () => {
    for (const flag of ["--use-kube=false", "-k=false"]) {
      const run = await analyze([flag, ERROR_ONLY]);
      assert.doesNotMatch(run.stderr, /--use-kube/);
      assert.match(run.stdout, /^Error \[MSH0122\]/);
    }
    const swallowed = await analyze(["-k", ERROR_ONLY, INFO_ONLY, "-A", "-o", "json"]);
    assert.deepEqual(codes(swallowed), ["MSH0102", "MSH0122"]);
    assert.match(swallowed.stderr, /--use-kube: no orchestrator API/);
  });

  it("without files: a usage error naming the offline mode", async () => {
    const run = await analyze([]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /no files or directories to analyze: there is no orchestrator API here/);
  });
});

describe("meshctl analyze: namespaces, stdin, mesh config, timeout", async () => {
  it("without -A only the -n namespace (default `default`) and cluster-scoped resources are reported", async () => {
    const dflt = await analyze([OFFLINE, "-R", "-o", "json", TREE]);
    assert.deepEqual(codes(dflt), ["MSH0102"]);
    assert.match(dflt.stderr, /^Note: 3 messages concern resources outside namespace default; use -A to analyze all namespaces$/m);
    assert.equal(dflt.status, 0);
    assert.deepEqual(codes(await analyze([OFFLINE, "-R", "-o", "json", "-n", "shop", TREE])), ["MSH0101", "MSH0102", "MSH0901", "MSH0127"]);
  });

  it("reads - from stdin, named <stdin>", async () => {
    const input = "apiVersion: networking.mesh.io/v1alpha3\nkind: VirtualService\nmetadata: { name: vs }\nspec: { hosts: [a], gateways: [nope] }\n";
    const run = await analyze([OFFLINE, "-"], { input });
    assert.equal(
      run.stdout,
      'Error [MSH0101] (VirtualService default/vs <stdin>:4) Referenced gateway not found: "nope"\n' +
        "Warning [MSH0132] (VirtualService default/vs <stdin>:4) one or more host [a] defined in VirtualService default/vs not found in Gateway default/nope.\n",
    );
  });

  it("unreadable paths are usage errors", async () => {
    const run = await analyze([OFFLINE, "analyze/missing.yaml"]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /cannot read "analyze\/missing\.yaml": no such file or directory/);
  });

  it("--meshConfigFile: enableAutoMtls false makes namespace STRICT need a DestinationRule", async () => {
    assert.deepEqual(codes(await analyze([OFFLINE, "-o", "json", "analyze/mesh-config.auto-mtls.yaml"])), []);
    const run = await analyze([OFFLINE, "-o", "json", "--meshConfigFile", "analyze/mesh-config.no-auto-mtls.yaml", "analyze/mesh-config.auto-mtls.yaml"]);
    assert.deepEqual(codes(run), ["MSH0901"]);
    assert.match(run.stdout, /auto mutual TLS is off \(enableAutoMtls: false\)/);
  });

  it("--meshConfigFile rootNamespace (and -i) move the root namespace", async () => {
    assert.deepEqual(codes(await analyze([OFFLINE, "-A", "-o", "json", "analyze/gateway-policy-namespace.bad.yaml"])), ["MSH0905"]);
    assert.deepEqual(
      codes(
        await analyze([OFFLINE, "-A", "-o", "json", "--meshConfigFile", "analyze/mesh-config.root-default.yaml", "analyze/gateway-policy-namespace.bad.yaml"]),
      ),
      [],
    );
    assert.deepEqual(codes(await analyze([OFFLINE, "-A", "-o", "json", "-i", "default", "analyze/gateway-policy-namespace.bad.yaml"])), []);
  });

  it("--meshConfigFile extensionProviders: a CUSTOM policy naming no declared authorizer is MSH0101 on spec.provider.name; AUDIT and CUSTOM are accepted", async () => {
    assert.deepEqual(
      codes(await analyze([OFFLINE, "-A", "-o", "json", "analyze/authorizationpolicy-provider.yaml"])),
      [],
      "without a mesh config the providers are unknown: nothing reported",
    );
    const run = await analyze([
      OFFLINE,
      "-A",
      "-o",
      "json",
      "--meshConfigFile",
      "analyze/mesh-config.ext-authz.yaml",
      "analyze/authorizationpolicy-provider.yaml",
    ]);
    assert.deepEqual(codes(run), ["MSH0101"]);
    assert.match(run.stdout, /"origin": "AuthorizationPolicy foo\/ext-authz-typo"/);
    assert.match(run.stdout, /"message": "unknown extension provider \\"sample-ext-authz-htp\\" \(meshConfig extensionProviders has/);
  });

  it("a bad mesh config value is a usage error", async () => {
    const run = await analyze([OFFLINE, "--meshConfigFile", "analyze/mesh-config.bad.yaml", ERROR_ONLY]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--meshConfigFile: analyze\/mesh-config\.bad\.yaml: enableAutoMtls: expected true or false, got "no"/);
  });

  it("--timeout: exit 1 when the analysis takes longer", async () => {
    const run = await analyze([OFFLINE, "--timeout", "1ns", ERROR_ONLY]);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /^Error: meshctl analyze: analysis did not finish within \S+ \(--timeout\)$/m);
    assert.equal((await analyze([OFFLINE, "--timeout", "0s", ERROR_ONLY])).status, 2);
  });

  it("-v lists executed and skipped analyzers", async () => {
    const run = await analyze([OFFLINE, "-v", ERROR_ONLY]);
    assert.match(run.stderr, /^Executed analyzers:\n(\t .+\n)+/m);
    assert.match(run.stderr, /^Skipped analyzers:\n(\t .+ \(no .* documents in the input\)\n)+/m);
    assert.match(run.stderr, /^\t policy-workload-selector \(no Pod or Deployment documents in the input\)$/m);
  });
});

describe("meshctl experimental analyze", async () => {
  it("is analyze (also as x analyze)", async () => {
    const args = [OFFLINE, "-A", "-R", "-o", "json", TREE];
    const direct = await analyze(args);
    for (const parent of ["experimental", "x"]) {
      const run = await meshctlInProcess([parent, "analyze", ...args], { cwd: FIXTURES });
      assert.equal(run.stdout, direct.stdout);
      assert.equal(run.status, direct.status);
    }
  });
});
