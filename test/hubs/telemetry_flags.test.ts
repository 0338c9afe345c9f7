// Shared CLI and telemetry helpers used by hubs: Go durations, logging flags, the logger.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { formatGoDuration, parseGoDuration } from "../../host/daemon/duration.ts";
import { Logger } from "../../host/telemetry/logger.ts";
import { parseLevelList } from "../../host/telemetry/logging_flags.ts";
import { HUB_LOG_SCOPES } from "../../host/hubs/options.ts";
import { tempDir } from "./support/hub_process.ts";

describe("Go durations", () => {
  const rows: Array<[string, number | undefined]> = [
    ["0", 0],
    ["10s", 10_000],
    ["1m30s", 90_000],
    ["2m0s", 120_000],
    ["250ms", 250],
    ["1.5h", 5_400_000],
    ["1x", undefined],
    ["s", undefined],
    ["", undefined],
  ];
  for (const [text, ms] of rows) it(`parses ${JSON.stringify(text)}`, () => assert.equal(parseGoDuration(text), ms));
  it("prints like Go", () => {
    assert.deepEqual([0, 250, 10_000, 120_000, 3_600_000, 1500].map(formatGoDuration), ["0s", "250ms", "10s", "2m0s", "1h0m0s", "1.5s"]);
  });
});

describe("logging", () => {
  it("parses scope:level lists; a bare level is the default scope's; all sets every scope", () => {
    assert.deepEqual(
      [...parseLevelList("debug,api:warn", HUB_LOG_SCOPES, "--f")],
      [
        ["default", "debug"],
        ["api", "warn"],
      ],
    );
    assert.equal(parseLevelList("all:error", HUB_LOG_SCOPES, "--f").get("mcp"), "error");
    assert.throws(() => parseLevelList("nope:info", HUB_LOG_SCOPES, "--f"), /unknown scope "nope"/);
    assert.throws(() => parseLevelList("api:loud", HUB_LOG_SCOPES, "--f"), /unknown level "loud"/);
  });

  it("writes console and JSON lines to file targets, filtered by scope level, changeable at run time", () => {
    const dir = tempDir();
    const path = join(dir, "log.txt");
    const fixed = () => new Date("2026-01-02T03:04:05.000Z");
    const base = { callerScopes: new Set<string>(), stacktraceLevels: new Map(), targets: [path] };
    const console = new Logger(
      HUB_LOG_SCOPES,
      {
        ...base,
        asJson: false,
        outputLevels: new Map([
          ["default", "info"],
          ["api", "warn"],
        ] as const),
      },
      fixed,
    );
    console.scope("default").info("hello", { n: 1 });
    console.scope("api").info("hidden");
    console.setLevel("api", "debug");
    console.scope("api").debug("shown");
    console.close();
    assert.equal(readFileSync(path, "utf8"), "2026-01-02T03:04:05.000Z\tinfo\thello\tn=1\n2026-01-02T03:04:05.000Z\tdebug\tapi\tshown\n");
    const jsonPath = join(dir, "log.json");
    const json = new Logger(HUB_LOG_SCOPES, { ...base, targets: [jsonPath], asJson: true, outputLevels: new Map() }, fixed);
    json.scope("validation").error("bad", { file: "a.yaml" });
    json.close();
    assert.deepEqual(JSON.parse(readFileSync(jsonPath, "utf8")), {
      time: "2026-01-02T03:04:05.000Z",
      level: "error",
      scope: "validation",
      msg: "bad",
      file: "a.yaml",
    });
  });

  it("rotates the --log_rotate file by size and keeps max backups", async () => {
    const dir = tempDir();
    const path = join(dir, "hub.log");
    let t = Date.parse("2026-01-01T00:00:00Z");
    const logger = new Logger(
      HUB_LOG_SCOPES,
      {
        asJson: false,
        callerScopes: new Set(),
        stacktraceLevels: new Map(),
        outputLevels: new Map(),
        targets: [],
        rotate: { path, maxAgeDays: 0, maxBackups: 2, maxSizeMb: 1 },
      },
      () => new Date((t += 1000)),
    );
    const big = "x".repeat(400 * 1024);
    for (let i = 0; i < 8; i++) logger.scope("default").info(big);
    logger.close();
    const { readdirSync } = await import("node:fs");
    const files = readdirSync(dir).sort();
    assert.equal(files.length, 3, files.join(", "));
    assert.ok(files.includes("hub.log"));
  });
});
