import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { DEFAULT_LOG_OUTPUT_LEVEL, parseLogOutputLevel } from "../../host/cli/meshctl/global_flags.ts";
import { needsOrchestrator } from "../../host/cli/meshctl/needs_orchestrator.ts";

describe("global flags: --log_output_level", async () => {
  const rows: Array<[string, Record<string, string> | RegExp]> = [
    [DEFAULT_LOG_OUTPUT_LEVEL, { default: "info", validation: "error", analysis: "warn", authn: "info" }],
    ["debug", { default: "debug", validation: "debug" }],
    ["all:none,validation:debug", { default: "none", validation: "debug", ads: "none" }],
    ["default:warn, rbac:error", { default: "warn", rbac: "error", sds: "warn" }],
    ["bogus:info", /unknown scope "bogus"/],
    ["default:verbose", /unknown level "verbose"/],
  ];
  for (const [text, expected] of rows) {
    it(text, () => {
      if (expected instanceof RegExp) return assert.throws(() => parseLogOutputLevel(text), expected);
      const levels = parseLogOutputLevel(text);
      for (const [scope, level] of Object.entries(expected)) assert.equal(levels[scope as keyof typeof levels], level, scope);
    });
  }
});

describe("needsOrchestrator", async () => {
  it("says plainly that no orchestrator API is available and returns a non-zero exit code", async () => {
    let text = "";
    const sink = new Writable({ write: (chunk, _e, done) => ((text += chunk), done()) });
    const code = needsOrchestrator("proxy-status", "`meshctl proxy-status --file dump.json`", sink);
    assert.equal(code, 69);
    assert.equal(
      text,
      "meshctl proxy-status: this command needs an orchestrator API, which is not available here; use `meshctl proxy-status --file dump.json` offline instead\n",
    );
  });
});
