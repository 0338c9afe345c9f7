// meshctl honours the global --log_output_level (spec 3): its log lines, on
// stderr in the daemons' console form, appear when their scope's level lets
// them, wherever the flag is written on the command line.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { FIXTURES } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";

const CONVERT = ["x", "authz", "convert", "-f", "policy-multiple-roles.yaml", "-s", "service-bookinfo.yaml"];
const convert = (...flags: string[]) => meshctlInProcess([...CONVERT, ...flags], { cwd: join(FIXTURES, "authz_convert") });
const TIME = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";

describe("meshctl --log_output_level", () => {
  it("default (default:info): x authz convert logs what it converted (info) and its warnings (warn), scope default", async () => {
    const r = await convert();
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^${TIME}\\tinfo\\tconverted ServiceRole default/role-1 to 1 authorization policies: generated-role-1-rule0-svc0-target0$`, "m"));
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
    assert.match(loud.stderr, new RegExp(`^${TIME}\\tinfo\\tinstaller\\tprofile default: base 16 objects, disco \\d+ objects, hub \\d+ objects, anchor \\d+ objects$`, "m"));
  });

  it("default:debug: every command logs the command and the global flags it runs with", async () => {
    const r = await meshctlInProcess(["version", "-s", "--log_output_level", "default:debug", "-n", "shop"]);
    assert.equal(r.status, 0);
    assert.match(r.stderr, new RegExp(`^${TIME}\\tdebug\\tmeshctl version: meshNamespace=mesh-system namespace=shop$`, "m"));
    assert.equal((await meshctlInProcess(["version", "-s"])).stderr, "");
  });
});
