import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeReportBytes } from "../../host/hubs/server.ts";
import { FilterEmulator } from "../../host/wasm/emulator.ts";
import { type AttributeMap, type AttributeValue, GlobalDictionary } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { BUILDS, SERVICE, allow, pluginConfig } from "./emulator_support.ts";

// A batch's report entries are encoded one after the other into one
// ReportRequest, and an attribute whose value repeats the one already in the
// message is copied from there (assembly/hub/entry_memo.ts). Whatever the
// requests share or not, the hub must decode each entry as that request's
// own attributes: the same as when every request is reported alone.

const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);

type Step = {
  headers: Record<string, string>;
  properties: Record<string, string>;
  status: number;
  response: Array<[string, string]>;
  trailers: Array<[string, string]>;
  log: Record<string, bigint | string>;
};

/** Requests that repeat, change, add and drop attributes from one to the next. */
function requests(): Step[] {
  const steps: Step[] = [];
  const paths = ["/orders/7?key=k1", "/orders/7?key=k1", "/orders/8", "/orders/7?key=k1", "/healthz?a=1&b=2", "/orders/7?key=k1"];
  for (let i = 0; i < 24; i++) {
    const headers: Record<string, string> = {
      ":method": i % 5 === 3 ? "POST" : "GET",
      ":path": paths[i % paths.length],
      ":authority": SERVICE,
      ":scheme": "http",
    };
    if (i % 3 !== 2) headers["user-agent"] = i % 4 === 0 ? "curl/8.5" : "emulator";
    if (i % 4 === 1) headers["x-b3-traceid"] = `trace-${i % 2}`;
    if (i % 6 === 5) headers["x-api-key"] = "k2";
    const response: Array<[string, string]> = i % 2 === 0 ? [["content-type", "text/plain"]] : [["content-type", "application/grpc"]];
    if (i % 4 === 3) response.push(["grpc-status", String(i % 3)], ["grpc-message", `message ${i % 2}`]);
    const log: Record<string, bigint | string> = { "response.size": BigInt(i % 3 === 0 ? 10 : 345), "request.total_size": 112n };
    if (i % 5 === 4) log["upstream.address"] = "10.0.0.9:8080";
    // Trailers (proxy_on_response_trailers), one of them over a same-name header.
    const trailers: Array<[string, string]> =
      i % 8 === 7
        ? [
            ["grpc-status", "13"],
            ["x-trailer", `t${i % 16}`],
          ]
        : [];
    steps.push({
      trailers,
      headers,
      properties: i % 7 === 6 ? { "source.address": "10.0.0.6:41001" } : { "source.address": "10.0.0.5:41000" },
      status: [200, 200, 404, 503, 200][i % 5],
      response,
      log,
    });
  }
  return steps;
}

/** What the hub decodes from every Report the module sent, entry by entry. */
function reported(wasm: string, transport: object): AttributeMap[] {
  const emu = new FilterEmulator(pluginConfig({ transport }), wasm);
  emu.script.push({ respond: allow() });
  // The bytes are copied when the call is made: the module's memory is reused afterwards.
  const messages = new Map<object, Buffer>();
  const settle = () => {
    for (const c of emu.calls) {
      if (!messages.has(c)) messages.set(c, Buffer.from(c.message));
      if (!c.answered && !c.cancelled) emu.answer(c, { respond: c.method === "Report" ? {} : allow() });
    }
  };
  for (const step of requests()) {
    const r = emu.request(step.headers, step.properties);
    settle();
    emu.advance(3);
    emu.finish(r.id, step.status, step.response, step.log, step.trailers);
    settle();
  }
  emu.advance(2000);
  settle();
  const reports = emu.calls.filter((c) => c.method === "Report");
  return reports.flatMap((c) => {
    const decoded = decodeReportBytes(messages.get(c)!, DICTIONARY);
    assert.deepEqual(decoded.refused, []);
    return decoded.entries;
  });
}

function shown(map: AttributeMap): Record<string, unknown> {
  const text = (v: AttributeValue): unknown =>
    "stringMapValue" in v ? Object.fromEntries(Object.entries(v.stringMapValue.entries).sort(([a], [b]) => a.localeCompare(b))) : v;
  return Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)).map(([name, v]) => [name, text(v)]));
}

for (const [build, wasm] of BUILDS) {
  describe(`filter in a proxy-wasm host (${build}): batched reports`, () => {
    it("the hub decodes each entry of a batch as the request's own attributes, as when each request is reported alone", () => {
      const batched = reported(wasm, { reportBatchMaxEntries: 10 });
      const alone = reported(wasm, { disableReportBatch: true });
      assert.equal(alone.length, requests().length);
      assert.equal(batched.length, alone.length);
      for (let i = 0; i < alone.length; i++) assert.deepEqual(shown(batched[i]), shown(alone[i]), `entry ${i}`);
      // The entries do differ where their requests do.
      const text = (m: AttributeMap, name: string) => JSON.stringify(m.get(name));
      assert.notEqual(text(batched[1], "request.path"), text(batched[2], "request.path"));
      assert.equal(text(batched[0], "request.path"), text(batched[1], "request.path"));
      assert.equal(batched[2].has("request.useragent"), false);
      assert.equal(batched[3].has("request.useragent"), true);
      assert.deepEqual(batched[3].get("response.grpc_status"), { stringValue: "0" });
      assert.deepEqual(batched[3].get("response.grpc_message"), { stringValue: "message 1" });
      assert.equal(batched[4].has("response.grpc_status"), false);
      // A response's trailers join its headers in response.headers; a trailer wins over a same-name header.
      assert.deepEqual(batched[7].get("response.grpc_status"), { stringValue: "13" });
      const responseHeaders = (m: AttributeMap) =>
        (m.get("response.headers") as { stringMapValue: { entries: Record<string, string> } }).stringMapValue.entries;
      assert.equal(responseHeaders(batched[7])["x-trailer"], "t7");
      assert.equal(responseHeaders(batched[15])["x-trailer"], "t15");
      assert.equal(responseHeaders(batched[6])["x-trailer"], undefined);
      assert.deepEqual(batched[11].get("response.grpc_status"), { stringValue: "2" });
    });
  });
}
