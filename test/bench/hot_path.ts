import { Action } from "../../host/wasm/abi_types.ts";
import { FilterEmulator } from "../../host/wasm/emulator.ts";
import { DEBUG_WASM, FilterModule, type RequestInput, serializeRequest } from "../../host/wasm/filter_module.ts";
import { pairsLength, writePairs } from "../../host/wasm/pairs.ts";
import { type BaselineConfig, type BaselineRequest, compileBaseline, evaluateBaseline } from "./baseline.ts";
import { median } from "./stats.ts";

const SERVICE = "bench.default.svc.cluster.local";
const PATTERN_COUNTS = [1, 10, 50, 200];
const ROUNDS = 5;
const WASM_ITERATIONS = 20_000;
const TS_ITERATIONS = 20_000;
/** The pattern count of the summary line and of the allocation figures. */
const SUMMARY_PATTERNS = 50;
const ALLOCATION_SAMPLES = 100;
// Requests on a check-cache hit: a first second of them (the quota cache
// learns the rate), then two seconds counted.
const HIT_WARMUP = 1000;
const HIT_SAMPLES = 2000;

/** N patterns over N/4 resources: collection GET/POST, item GET, and a `**` file route. */
function patterns(n: number): BaselineConfig["patterns"] {
  const kinds = [
    (i: number) => ({ method: "GET", uriTemplate: `/api/r${i}/items` }),
    (i: number) => ({ method: "POST", uriTemplate: `/api/r${i}/items` }),
    (i: number) => ({ method: "GET", uriTemplate: `/api/r${i}/items/{id}` }),
    (i: number) => ({ method: "GET", uriTemplate: `/api/r${i}/items/{id}/files/{path=**}` }),
  ];
  return Array.from({ length: n }, (_, i) => ({ ...kinds[i % 4](Math.floor(i / 4)), attributes: { "api.operation": `op${i}` } }));
}

export function config(n: number): BaselineConfig {
  return {
    specAttributes: { "api.service": "bench", "api.version": "v1" },
    patterns: patterns(n),
    apiKeys: [],
    quotaRules: [
      { match: [], quotas: [{ quota: "requests", charge: 1 }] },
      { match: [{ "request.method": { exact: "POST" }, "request.path": { prefix: "/api/" } }], quotas: [{ quota: "writes", charge: 2 }] },
    ],
  };
}

export function pluginConfig(c: BaselineConfig): string {
  return JSON.stringify(pluginConfigObject(c));
}

function pluginConfigObject(c: BaselineConfig): object {
  const attrs = (r: Record<string, string>) => ({ attributes: Object.fromEntries(Object.entries(r).map(([k, v]) => [k, { stringValue: v }])) });
  return {
    httpClientConfig: {
      serviceConfigs: {
        [SERVICE]: {
          httpApiSpec: [
            {
              attributes: attrs(c.specAttributes),
              patterns: c.patterns.map((p) => ({ httpMethod: p.method, uriTemplate: p.uriTemplate, attributes: attrs(p.attributes) })),
            },
          ],
          quotaSpec: [{ rules: c.quotaRules.map((r) => ({ match: r.match.map((m) => ({ clause: m })), quotas: r.quotas })) }],
        },
      },
    },
  };
}

/** The request mix: a hit on the last resource, on the first, a `**` route, and a miss. */
function requests(n: number): Array<Array<[string, string]>> {
  const last = Math.max(0, Math.floor((n - 1) / 4));
  const common: Array<[string, string]> = [
    [":authority", SERVICE],
    [":scheme", "http"],
    ["user-agent", "bench/1.0"],
    ["accept", "application/json"],
    ["x-request-id", "0f0e0d0c-0b0a-0908-0706-050403020100"],
    ["x-api-key", "k-1"],
  ];
  return [
    [[":method", "GET"], [":path", `/api/r${last}/items/42?key=abc`], ...common],
    [[":method", "POST"], [":path", "/api/r0/items"], ...common],
    [[":method", "GET"], [":path", `/api/r${last}/items/7/files/a/b/c.txt`], ...common],
    [[":method", "GET"], [":path", "/nowhere/at/all"], ...common],
  ];
}

export function requestInputs(n: number): RequestInput[] {
  return requests(n).map((headers) => ({
    headers,
    properties: [
      ["source.address", "10.1.2.3:51000"],
      ["mesh.destination_service", SERVICE],
    ],
    timeNanos: 1_763_800_000_000_000_000n,
  }));
}

/** Allocations per call of `run`, counted over many calls after a first one (which may fill caches and grow storage). */
function allocationsPer(counter: () => bigint, run: (times: number) => void): number {
  run(1);
  const before = counter();
  run(ALLOCATION_SAMPLES);
  return Number(counter() - before) / ALLOCATION_SAMPLES;
}

/**
 * Allocations per request in the debug build (which counts them): the pure
 * evaluation the timing measures, and a proxy's request-headers callback
 * answered from the check cache, then the whole stream with its report.
 */
export function allocationFigures(debugWasm = DEBUG_WASM): { cacheHit: number; lines: string[] } {
  const c = config(SUMMARY_PATTERNS);
  const debug = FilterModule.load(debugWasm);
  const configured = debug.configure(pluginConfig(c));
  if ("error" in configured) throw new Error(configured.error);
  const inputs = requestInputs(SUMMARY_PATTERNS);
  let evaluate = 0;
  for (const input of inputs) {
    const serialized = serializeRequest(input);
    evaluate += allocationsPer(
      () => debug.allocations(),
      (times) => {
        for (let i = 0; i < times; i++) debug.evaluateSerialized(configured.handle, serialized);
      },
    );
  }
  debug.release(configured.handle);

  const emu = new FilterEmulator(pluginConfigObject(c), debugWasm);
  const headers = requests(SUMMARY_PATTERNS)[1];
  const properties = { "source.address": "10.1.2.3:51000", "mesh.destination_service": SERVICE };
  // Allowed, cacheable by request.path (global word 17) for longer than the measurement.
  const precondition = {
    status: { code: 0 },
    validDuration: { seconds: 3600 },
    validUseCount: 1_000_000,
    referencedAttributes: { attributeMatches: [{ name: 17, condition: 2 }] },
  };
  emu.script.push({ respond: { precondition } });
  emu.finish(emu.request(headers, properties).id);
  if (emu.calls.length !== 1) throw new Error("the first request should have asked the hub");
  // Answered at once means answered from the caches (policy and quota); a miss would wait for the hub.
  const answered = (r: { id: number; action: Action }): number => {
    if (r.action !== Action.Continue) throw new Error("a later request was not answered from the check cache");
    return r.id;
  };
  // The hub answers each call after the callback that made it, outside the
  // counts: a quota prefetch is granted what it asked for, a report accepted.
  const answerCalls = (): number => {
    let made = 0;
    for (const call of emu.calls) {
      if (call.answered || call.cancelled) continue;
      made++;
      const quotas = Object.fromEntries(
        Object.entries((call.decoded.quotas ?? {}) as Record<string, { amount?: number }>).map(([name, q]) => [
          name,
          { grantedAmount: q.amount ?? 0, validDuration: { seconds: 60 } },
        ]),
      );
      emu.answer(call, { respond: call.method === "Report" ? {} : { precondition: { status: { code: 0 } }, quotas } });
    }
    return made;
  };
  // A steady stream of a thousand requests per second on the emulated clock
  // (the quota cache prefetches ahead of that rate), each stream finished
  // before the next starts, as in a proxy: finished streams hand their
  // objects to the next ones. A request's own allocations are its context's
  // creation and its request headers.
  const request = (): { allocations: bigint; id: number; calls: number } => {
    emu.advance(1);
    answerCalls();
    const before = emu.vm.allocations();
    const id = answered(emu.request(headers, properties));
    return { allocations: emu.vm.allocations() - before, id, calls: answerCalls() };
  };
  for (let i = 0; i < HIT_WARMUP; i++) emu.finish(request().id);
  // Apart: the requests that also sent a quota prefetch (a hub call, with its message).
  let hitAllocations = 0n;
  let prefetchAllocations = 0n;
  let prefetching = 0;
  for (let i = 0; i < HIT_SAMPLES; i++) {
    const r = request();
    if (r.calls > 0) {
      prefetching++;
      prefetchAllocations += r.allocations;
    } else {
      hitAllocations += r.allocations;
    }
    emu.finish(r.id);
    answerCalls();
  }
  const cacheHit = Number(hitAllocations) / (HIT_SAMPLES - prefetching);
  const withPrefetch =
    prefetching > 0
      ? `; the ${prefetching} of ${HIT_SAMPLES} that also sent a quota prefetch ${(Number(prefetchAllocations) / prefetching).toFixed(0)} each, ${(Number(hitAllocations + prefetchAllocations) / HIT_SAMPLES).toFixed(2)} averaged over all`
      : "";
  const stream = allocationsPer(
    () => emu.vm.allocations(),
    (times) => {
      for (let i = 0; i < times; i++) {
        emu.finish(request().id);
        answerCalls();
      }
    },
  );
  return {
    cacheHit,
    lines: [
      `allocations per request (debug build, ${SUMMARY_PATTERNS} patterns): evaluation ${(evaluate / inputs.length).toFixed(1)}; ` +
        `request headers on a check-cache hit ${cacheHit.toFixed(1)} (a steady 1000 requests/s${withPrefetch}); whole stream with its report ${stream.toFixed(1)}`,
    ],
  };
}

function nsPer(iterations: number, run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / iterations;
}

// Issue 13's targets: at most 1 µs per request at 50 patterns (on an idle
// machine), at least 3x the baseline at every pattern count.
const TARGET_NS_AT_50 = 1000;
const TARGET_RATIO = 3;

/** Each target as met, or the distance that remains. */
function targetLines(at50: number, fastestAt50: number, ratios: number[], cacheHitAllocations: number): string[] {
  const worst = Math.min(...ratios);
  const fastest = fastestAt50 <= TARGET_NS_AT_50 ? `; its fastest round, ${fastestAt50.toFixed(0)} ns, is under it` : "";
  return [
    cacheHitAllocations === 0
      ? "target zero allocations per request on a check-cache hit: met (a request that also sends a quota prefetch allocates its hub call)"
      : `target zero allocations per request on a check-cache hit: not met, ${cacheHitAllocations.toFixed(1)} to go`,
    at50 <= TARGET_NS_AT_50
      ? `target <= ${TARGET_NS_AT_50} ns/request at ${SUMMARY_PATTERNS} patterns: met`
      : `target <= ${TARGET_NS_AT_50} ns/request at ${SUMMARY_PATTERNS} patterns: not met by the median, ${(at50 - TARGET_NS_AT_50).toFixed(0)} ns (${(at50 / TARGET_NS_AT_50).toFixed(1)}x) to go${fastest}`,
    worst >= TARGET_RATIO
      ? `target baseline/wasm >= ${TARGET_RATIO} at every count: met`
      : `target baseline/wasm >= ${TARGET_RATIO} at every count: not met, worst ${worst.toFixed(2)} (wasm needs ${(TARGET_RATIO / worst).toFixed(1)}x less time there)`,
  ];
}

/**
 * ns per request of `filter` evaluating the mix, one call per request as a
 * proxy's request-headers callback is one: the request's serialized maps are
 * copied into module memory and evaluated there.
 */
function wasmNsPerRequest(filter: FilterModule, handle: number, serialized: Uint8Array[]): number {
  return nsPer(WASM_ITERATIONS * serialized.length, () => {
    for (let i = 0; i < WASM_ITERATIONS; i++) for (const request of serialized) filter.evaluateSerialized(handle, request);
  });
}

/**
 * Measures the hot path in the module and in the TS baseline, side by side;
 * with `compareWasm` (HOT_PATH_COMPARE_WASM=path), a second module is timed in
 * the same rounds, for before/after figures.
 */
export function runHotPathBench(compareWasm = process.env.HOT_PATH_COMPARE_WASM): string[] {
  const filter = FilterModule.load();
  const other = compareWasm ? FilterModule.load(compareWasm) : undefined;
  const lines = [
    "hot path: attributes + API spec + API key + quotas, ns per request (median of 5 interleaved rounds, 4-request mix)",
    `patterns   filter.wasm   TS baseline   baseline/wasm${other ? `   compared (${compareWasm})   compared/filter.wasm` : ""}`,
  ];
  const wasmByCount: number[] = [];
  const fastestByCount: number[] = [];
  const ratios: number[] = [];
  for (const n of PATTERN_COUNTS) {
    const c = config(n);
    const configured = filter.configure(pluginConfig(c));
    if ("error" in configured) throw new Error(configured.error);
    const compared = other?.configure(pluginConfig(c));
    if (compared && "error" in compared) throw new Error(compared.error);
    const baseline = compileBaseline(c);
    const mix = requests(n);
    const serialized = requestInputs(n).map(serializeRequest);
    const tsInputs: BaselineRequest[] = mix.map((headers) => ({ headers, sourceAddress: "10.1.2.3:51000", timeMs: 1_763_800_000_000 }));
    const wasm: number[] = [];
    const ts: number[] = [];
    const before: number[] = [];
    // One untimed round first: until V8's optimizing tiers have compiled the
    // module and the baseline (in the background, slower on a loaded
    // machine), the first count's first rounds would time baseline code.
    wasmNsPerRequest(filter, configured.handle, serialized);
    for (let i = 0; i < TS_ITERATIONS; i++) for (const input of tsInputs) evaluateBaseline(baseline, input);
    if (other && compared) wasmNsPerRequest(other, compared.handle, serialized);
    for (let round = 0; round < ROUNDS; round++) {
      wasm.push(wasmNsPerRequest(filter, configured.handle, serialized));
      ts.push(
        nsPer(TS_ITERATIONS * tsInputs.length, () => {
          for (let i = 0; i < TS_ITERATIONS; i++) for (const input of tsInputs) evaluateBaseline(baseline, input);
        }),
      );
      if (other && compared) before.push(wasmNsPerRequest(other, compared.handle, serialized));
    }
    filter.release(configured.handle);
    if (other && compared) other.release(compared.handle);
    const w = median(wasm);
    const t = median(ts);
    wasmByCount.push(w);
    fastestByCount.push(Math.min(...wasm));
    ratios.push(t / w);
    const b =
      before.length > 0
        ? `   ${median(before)
            .toFixed(0)
            .padStart(11 + compareWasm!.length)}   ${(median(before) / w).toFixed(2).padStart(20)}`
        : "";
    lines.push(`${String(n).padStart(8)}   ${w.toFixed(0).padStart(11)}   ${t.toFixed(0).padStart(11)}   ${(t / w).toFixed(2).padStart(13)}${b}`);
  }
  lines.push(`filter.wasm cost at ${PATTERN_COUNTS.at(-1)} patterns / at ${PATTERN_COUNTS[0]} pattern: ${(wasmByCount.at(-1)! / wasmByCount[0]).toFixed(2)}`);
  lines.push(hostSerializationLine());
  const allocations = allocationFigures();
  lines.push(...allocations.lines);
  const at50 = wasmByCount[PATTERN_COUNTS.indexOf(SUMMARY_PATTERNS)];
  const fastestAt50 = fastestByCount[PATTERN_COUNTS.indexOf(SUMMARY_PATTERNS)];
  // On the shared 2-core VM the module's rounds alternate between two speeds
  // about 1.7x apart with nothing else running (docs/benchmarks.md): the
  // median is the figure; the fastest round shows the undisturbed cost.
  lines.push(
    `filter.wasm at ${SUMMARY_PATTERNS} patterns: median ${at50.toFixed(0)} ns/request of ${ROUNDS} rounds, fastest round ${fastestAt50.toFixed(0)} ns`,
  );
  lines.push(...targetLines(at50, fastestAt50, ratios, allocations.cacheHit));
  lines.push(
    `hot path: wasm ${at50.toFixed(0)} ns/request at ${SUMMARY_PATTERNS} patterns; baseline/wasm ${PATTERN_COUNTS.map((n, i) => `${n}:${ratios[i].toFixed(2)}`).join(" ")}`,
  );
  return lines;
}

/**
 * What the figures above leave to the host: serializing a request's header
 * and property maps from JS strings (the Node host's share; a proxy does it
 * in its own code), for scale.
 */
function hostSerializationLine(): string {
  const inputs = requestInputs(SUMMARY_PATTERNS);
  const out = Buffer.alloc(64 * 1024);
  const ns = median(
    Array.from({ length: ROUNDS }, () =>
      nsPer(TS_ITERATIONS * inputs.length, () => {
        for (let i = 0; i < TS_ITERATIONS; i++) {
          for (const input of inputs) {
            writePairs(out, 0, input.headers);
            writePairs(out, pairsLength(input.headers), input.properties);
          }
        }
      }),
    ),
  );
  return `not counted above, the host's share: serializing a request's maps from JS strings ${ns.toFixed(0)} ns/request`;
}
