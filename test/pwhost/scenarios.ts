// The module's retries, shutdown flush and UTF-8 safety on the real
// proxy-wasm host (proxy-wasm-cpp-host + WAMR, the ABI library Envoy links),
// driven by pwdriver-waits (build-driver.sh). Not part of `npm test`: the
// host takes a C++ build. Run from the project root after `npm run build`:
//   PWHOST_DIR=/tmp/pwhost node --import tsx test/pwhost/scenarios.ts [build/filter.debug.wasm]
// Prints one line per scenario and exits non-zero when one fails.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { messageType } from "../../host/wire/protos.ts";
import { invalidStrings } from "../../host/wire/utf8_strings.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const WASM = process.argv[2] ?? join(ROOT, "build", "filter.wasm");
const driver = execFileSync("bash", [join(import.meta.dirname, "build-driver.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim().split("\n").pop()!;
const CONNECT_ERROR = "UNAVAILABLE:upstream connect error or disconnect/reset before headers. reset reason: connection failure";
const REQUEST = ["--header", ":method=GET", "--header", ":path=/orders/7", "--header", ":authority=orders", "--header", ":scheme=http"];

function config(policy: object, transport: object = {}): string {
  return JSON.stringify({
    httpClientConfig: { transport: { networkFailPolicy: policy, ...transport }, defaultDestinationService: "orders", serviceConfigs: { orders: {} } },
  });
}

function run(args: string[]): string {
  const r = spawnSync(driver, [WASM, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `pwdriver exited ${r.status}:\n${r.stdout.slice(-3000)}${r.stderr}`);
  return r.stdout;
}

/** Virtual time (ms since the first stream) of each Check the module sent, from the driver's tick lines. */
function checkTimes(out: string): number[] {
  let clock = 0;
  const times: number[] = [];
  for (const line of out.split("\n")) {
    const tick = /proxy_on_tick\(\d+\) #\d+ \(virtual clock \+(\d+)ms\)/.exec(line);
    if (tick) clock += Number(tick[1]);
    if (/grpc_call .*method="Check"/.test(line)) times.push(clock);
  }
  return times;
}

function messages(out: string, method: "Check" | "Report"): Buffer[] {
  const tokens = [...out.matchAll(new RegExp(`grpc_call .*method="${method}".* -> token (\\d+)`, "g"))].map((m) => m[1]);
  return tokens.map((t) => Buffer.from(new RegExp(`message\\[${t}\\] hex=([0-9a-f]+)`).exec(out)![1], "hex"));
}

const scenarios: Array<[string, () => string]> = [
  ["FAIL_CLOSE, maxRetry 2: 3 Check attempts spaced by the backoff, then 503", () => {
    const out = run(["--config", config({ policy: "FAIL_CLOSE", maxRetry: 2, baseRetryWait: "0.080s", maxRetryWait: "1s" }), ...REQUEST, "--grpc-response-for", `Check=${CONNECT_ERROR}`, "--grpc-response-for", "Report=OK:", "--wait-ticks", "20"]);
    const t = checkTimes(out);
    assert.equal(t.length, 3, "three attempts");
    assert.equal(t[1] - t[0], 80, "first retry after baseRetryWait");
    assert.ok(t[2] - t[1] >= 80 && t[2] - t[1] <= 160, `second retry after ${t[2] - t[1]} ms`);
    assert.match(out, /--> outcome: local reply 503 "UNAVAILABLE:upstream connect error/);
    assert.doesNotMatch(out, /metadata=\{"x-mesh-retry-policy"/, "no retry metadata for Envoy to forward");
    assert.match(out, /hub_client\.total_remote_call_retries = 2/);
    return `attempts at +${t.join(", +")} ms (virtual clock)`;
  }],
  ["FAIL_OPEN, maxRetry 2: the same 3 attempts, then the request continues", () => {
    const out = run(["--config", config({ policy: "FAIL_OPEN", maxRetry: 2, baseRetryWait: "0.080s", maxRetryWait: "1s" }), ...REQUEST, "--grpc-response-for", `Check=${CONNECT_ERROR}`, "--grpc-response-for", "Report=OK:", "--wait-ticks", "20"]);
    const t = checkTimes(out);
    assert.equal(t.length, 3);
    assert.equal(t[1] - t[0], 80);
    assert.ok(t[2] - t[1] >= 80 && t[2] - t[1] <= 160);
    assert.match(out, /--> outcome: request continued to the upstream/);
    return `attempts at +${t.join(", +")} ms (virtual clock)`;
  }],
  ["shutdown: the final report batch is sent before the root context is done", () => {
    const out = run(["--config", config({ policy: "FAIL_OPEN" }), ...REQUEST, "--grpc-response-for", "Check=OK:", "--grpc-response-for", "Report=OK:", "--answer-at-shutdown", "--wait-ticks", "10"]);
    const shutdown = out.slice(out.indexOf("-- shutdown: releasing the plugin"));
    const order = ["proxy_on_done(1) (root)", 'method="Report"', "<< proxy_on_done = false", ">> proxy_on_grpc_receive", "done -> OK", "proxy_on_delete(1) (root)"].map((s) => shutdown.indexOf(s));
    order.forEach((at, i) => assert.ok(at >= 0 && (i === 0 || at > order[i - 1]), `step ${i} out of order: ${order}`));
    assert.equal(messages(out, "Report").length, 1);
    return "on_done → Report → on_done=false → answer → proxy_done → on_delete";
  }],
  ["shutdown, hub silent: proxy_done after the bounded wait, the batch counted as dropped", () => {
    const out = run(["--config", config({ policy: "FAIL_OPEN" }), ...REQUEST, "--grpc-response-for", "Check=OK:", "--wait-ticks", "10"]);
    assert.match(out, /<< proxy_on_done = false/);
    assert.match(out, /done -> OK/);
    assert.match(out, /hub_client\.report_dropped = 1/);
    return "done after 5 s of virtual time";
  }],
  ["client bytes that are not UTF-8: valid messages, invalid forwarded attribute dropped, deny stays a deny under FAIL_OPEN", () => {
    const forwarded = Buffer.concat([Buffer.from("0a140a0a736f757263652e75696412061204", "hex"), Buffer.from([0x61, 0xed, 0xbf, 0xbf]), Buffer.from("0a190a10736f757263652e6e616d65737061636512051203776562", "hex")]).toString("base64");
    const type = messageType("mesh.hub.v1.CheckResponse");
    const deny = Buffer.from(type.encode(type.fromObject({ precondition: { status: { code: 7, message: "denied" } } })).finish()).toString("hex");
    const junk = Buffer.from([0x61, 0xed, 0xbf, 0xbf, 0xff]).toString("latin1");
    const out = run(["--config", config({ policy: "FAIL_OPEN" }, { disableReportBatch: true }), ...REQUEST, "--header", `x-mesh-attributes=${forwarded}`, "--header", `x-junk=${junk}`, "--grpc-response-for", `Check=OK:hex:${deny}`, "--grpc-response-for", "Report=OK:"]);
    assert.match(out, /--> outcome: local reply 403 "PERMISSION_DENIED:denied"/);
    for (const [method, name] of [["Check", "mesh.hub.v1.CheckRequest"], ["Report", "mesh.hub.v1.ReportRequest"]] as const) {
      const sent = messages(out, method);
      assert.ok(sent.length > 0, method);
      for (const m of sent) assert.deepEqual(invalidStrings(messageType(name), m), [], `${method} strings`);
    }
    assert.match(out, /hub_client\.forwarded_attributes_dropped = 1/);
    return "Check and Report valid UTF-8; 403 under FAIL_OPEN";
  }],
];

let failed = 0;
for (const [name, scenario] of scenarios) {
  try {
    console.log(`ok   ${name}: ${scenario()}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${(e as Error).message}`);
  }
}
console.log(`${scenarios.length - failed}/${scenarios.length} scenarios passed on ${driver} with ${WASM}`);
process.exit(failed > 0 ? 1 : 0);
