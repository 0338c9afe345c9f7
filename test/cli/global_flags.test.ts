// meshctl's global flags (spec 3): --log_output_level is honoured (its log lines, on
// stderr in the daemons' console form, appear when their scope's level lets
// them), and every global flag is taken wherever it is written.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { FIXTURES } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";

// The renderings below are those of a clean environment: NAMESPACE and JWT_POLICY (spec 2 column CT) would change them (test/cli/ct_variables.test.ts).
delete process.env.NAMESPACE;
delete process.env.JWT_POLICY;

const CONVERT = ["x", "authz", "convert", "-f", "policy-multiple-roles.yaml", "-s", "service-bookinfo.yaml"];
const convert = (...flags: string[]) => meshctlInProcess([...CONVERT, ...flags], { cwd: join(FIXTURES, "authz_convert") });
const TIME = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";

describe("meshctl --log_output_level", () => {
  it("default (default:info): x authz convert logs what it converted (info) and its warnings (warn), scope default", async () => {
    const r = await convert();
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`^${TIME}\\tinfo\\tconverted ServiceRole default/role-1 to 1 authorization policies: generated-role-1-rule0-svc0-target0$`, "m"),
    );
    assert.match(r.stderr, new RegExp(`^${TIME}\\twarn\\tPLEASE ALWAYS REVIEW THE CONVERTED POLICIES BEFORE APPLYING\\.$`, "m"));
  });

  it("default:warn hides the info lines, default:error (or all:none) every line; the policies are printed all the same", async () => {
    const plain = await convert();
    const warn = await convert("--log_output_level", "default:warn");
    assert.doesNotMatch(warn.stderr, /\tinfo\t/);
    assert.match(warn.stderr, /\twarn\t/);
    for (const level of ["default:error", "all:none"]) {
      const quiet = await meshctlInProcess(["--log_output_level", level, ...CONVERT], { cwd: join(FIXTURES, "authz_convert") });
      assert.equal(quiet.status, 0);
      assert.equal(quiet.stderr, "", level);
      assert.equal(quiet.stdout, plain.stdout);
    }
  });

  it("installer: manifest generate says what it rendered at info (hidden at the default installer:warn)", async () => {
    const quiet = await meshctlInProcess(["manifest", "generate"]);
    assert.equal(quiet.stderr, "");
    const loud = await meshctlInProcess(["manifest", "generate", "--log_output_level", "installer:info"]);
    assert.match(
      loud.stderr,
      new RegExp(`^${TIME}\\tinfo\\tinstaller\\tprofile default: base \\d+ objects, disco \\d+ objects, hub \\d+ objects, anchor \\d+ objects$`, "m"),
    );
  });

  it("default:debug: every command logs the command and the global flags it runs with", async () => {
    const r = await meshctlInProcess(["version", "-s", "--log_output_level", "default:debug", "-n", "shop"]);
    assert.equal(r.status, 0);
    assert.match(r.stderr, new RegExp(`^${TIME}\\tdebug\\tmeshctl version: meshNamespace=mesh-system namespace=shop$`, "m"));
    assert.equal((await meshctlInProcess(["version", "-s"])).stderr, "");
  });
});

describe("meshctl's global flags in any position", () => {
  // -i before the program's command, between group and subcommand, among the subcommand's flags, last.
  const positions: string[][] = [
    ["-i", "mesh-east", "manifest", "generate"],
    ["manifest", "-i", "mesh-east", "generate"],
    ["manifest", "generate", "-i", "mesh-east"],
    ["manifest", "generate", "--meshNamespace=mesh-east", "--log_output_level", "installer:warn"],
  ];
  for (const args of positions) {
    it(args.join(" "), async () => {
      const r = await meshctlInProcess(args);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /kind: Deployment\nmetadata:\n  name: mesh-disco\n  namespace: mesh-east\n/);
    });
  }

  it("x authz convert: -r defaults to -i wherever -i is written", async () => {
    for (const args of [
      ["-i", "rootns", ...CONVERT],
      ["x", "-i", "rootns", "authz", "convert", ...CONVERT.slice(3)],
      [...CONVERT, "-i", "rootns"],
    ]) {
      const r = await meshctlInProcess([...args, "--allowNoClusterRbacConfig"], { cwd: join(FIXTURES, "authz_convert") });
      assert.equal(r.status, 0, r.stderr);
    }
    const off = await meshctlInProcess(["x", "authz", "-i", "rootns", "convert", "-f", "policy-clusterRbacConfig-off.yaml", "-s", "service-bookinfo.yaml"], {
      cwd: join(FIXTURES, "authz_convert"),
    });
    assert.match(off.stdout, /name: generated-global-allow-all\n  namespace: rootns\n/);
  });
});
