// The module on the real proxy-wasm host: the release module and a no-op
// module on proxy-wasm-cpp-host over WAMR (the ABI library and the runtime
// Envoy embeds), driven by pwdriver over the same requests, their cost counted
// in instructions by valgrind's callgrind. Instruction counts do not depend on
// V8 or on what else the machine runs, so this figure tracks what a proxy pays
// for the filter from one commit to the next on a busy machine.
//
// Each module runs twice, SHORT and LONG requests; the difference divided by
// the difference in requests is the steady-state cost of one request, without
// the start (module load, configuration, the first Check). The requests are the
// sidecar bench's (GET /pets/42?key=bench against the shipped configuration:
// HTTPAPISpec, API key, quota, check and quota caches on); the hub answers
// every Check with a grant valid for 10 minutes and 100 000 uses, so every
// request after the first few is a check-cache and quota-cache hit, and the
// report batch is sent every 100 requests (one virtual second, the module's
// tick, passes every 100 requests).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePwdriver } from "../../build/pwhost.mjs";
import { messageType } from "../../host/wire/protos.ts";
import { buildNoopModule } from "./noop_module.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const SHORT = 200;
const LONG = 1200;
const REQUESTS_PER_TICK = 100;
const REQUEST = [":method=GET", ":path=/pets/42?key=bench", ":authority=petstore.demo.svc.cluster.local", ":scheme=http"];

/** A CheckResponse granting the request and any quota asked, for longer than the run lasts. */
function grant(): string {
  const type = messageType("mesh.hub.v1.CheckResponse");
  const response = {
    precondition: { status: { code: 0 }, validDuration: { seconds: 600 }, validUseCount: 100_000 },
    quotas: { requestcount: { grantedAmount: 1_000_000, validDuration: { seconds: 600 } } },
  };
  return `0:hex:${Buffer.from(type.encode(type.fromObject(response)).finish()).toString("hex")}`;
}

/** The shipped plugin configuration without its TCP client (the requests are HTTP). */
function shippedHttpConfig(): string {
  const shipped = JSON.parse(readFileSync(join(ROOT, "build", "deploy", "plugin-config.json"), "utf8")) as Record<string, unknown>;
  delete shipped.tcpClientConfig;
  return JSON.stringify(shipped);
}

/** Instructions callgrind counted for one run of the driver; throws when the run did not serve every request. */
function instructions(driver: string, module: string, configFile: string, requests: number): number {
  const args = [
    "--tool=callgrind",
    "--callgrind-out-file=/dev/null",
    // WAMR touches its whole native stack guard region at start; valgrind's default 8 MiB main stack is too small for it.
    "--main-stacksize=67108864",
    driver,
    module,
    "--config-file",
    configFile,
    ...REQUEST.flatMap((h) => ["--header", h]),
    "--requests",
    String(requests),
    "--tick-every",
    String(REQUESTS_PER_TICK),
    "--grpc-response",
    grant(),
    "--quiet",
  ];
  const run = spawnSync("valgrind", args, { encoding: "utf8", maxBuffer: 64 << 20 });
  if (run.error) throw run.error;
  const served = new RegExp(`RESULT: OK \\(module loaded, configured, ${requests} stream\\(s\\) served\\)`);
  if (run.status !== 0 || !served.test(run.stdout))
    throw new Error(`pwdriver under callgrind failed (exit ${run.status}):\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`);
  const collected = /Collected : (\d+)/.exec(run.stderr);
  if (!collected) throw new Error(`no instruction count in callgrind's output:\n${run.stderr.slice(-2000)}`);
  return Number(collected[1]);
}

/** Steady-state instructions per request: the slope between a SHORT and a LONG run. */
function perRequest(driver: string, module: string, configFile: string): number {
  return (instructions(driver, module, configFile, LONG) - instructions(driver, module, configFile, SHORT)) / (LONG - SHORT);
}

export function runPwhostBench(): string[] {
  const waits = ensurePwdriver(ROOT);
  const build = spawnSync("bash", [join(ROOT, "test", "pwhost", "build-callgrind-driver.sh")], {
    encoding: "utf8",
    env: { ...process.env, PWHOST_DIR: join(waits, "..") },
  });
  if (build.status !== 0) throw new Error(`building the callgrind driver failed:\n${build.stderr}`);
  const driver = build.stdout.trim().split("\n").at(-1)!;
  const scratch = mkdtempSync(join(tmpdir(), "mesh-pwhost-bench-"));
  try {
    const filterConfig = join(scratch, "filter.json");
    writeFileSync(filterConfig, shippedHttpConfig());
    const noopConfig = join(scratch, "noop.json");
    writeFileSync(noopConfig, "{}");
    const load = loadavg()[0].toFixed(1);
    const filter = perRequest(driver, join(ROOT, "build", "filter.wasm"), filterConfig);
    const noop = perRequest(driver, buildNoopModule(scratch), noopConfig);
    return [
      `proxy-wasm-cpp-host on WAMR (fast interpreter), callgrind, steady state of ${LONG - SHORT} cached requests (GET /pets/42?key=bench, shipped configuration), load average ${load}:`,
      `  release module: ${Math.round(filter)} instructions per request (host and module)`,
      `  no-op module:   ${Math.round(noop)} instructions per request (the host alone)`,
      `  the filter's own: ${Math.round(filter - noop)} instructions per request`,
      `pwhost: filter ${Math.round(filter)} instructions/request, no-op ${Math.round(noop)}, filter/no-op = ${(filter / noop).toFixed(2)}`,
    ];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
