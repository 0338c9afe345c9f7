// Where the module's work goes, function by function, in a form that does
// not depend on the machine's load: a counting copy of build/filter.wasm
// (binaryen adds two counters per function: its calls, and the wasm
// instructions it executes, counted per straight-line run) driven over the
// pwhost bench's requests by the in-process proxy-wasm host, or over the hot
// path bench's mix. On WAMR's fast interpreter, which callgrind shows as one
// loop, an instruction costs about 15 to 20 x86 instructions and a call a few
// hundred (the frame and its locals are set up each time): both columns count.
//
//   node --import tsx test/bench/op_profile.ts [pwhost|sidecar|hot-path] [top]
//
// local.get, constants, drop, block, loop and nop count nothing (the fast
// interpreter folds them into the instructions that use them); an early exit
// from a run is counted as the whole run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import binaryen from "binaryen";
import { FilterEmulator } from "../../host/wasm/emulator.ts";
import { FilterModule, serializeRequest } from "../../host/wasm/filter_module.ts";
import { config, pluginConfig, requestInputs } from "./hot_path.ts";
import { BENCH_ROUTE, BENCH_SOCKETS, BENCH_UPSTREAM_ADDRESS, benchOutcome, benchRequestHeaders, benchResponseHeaders } from "./sidecar_like_requests.ts";

const ROOT = join(import.meta.dirname, "..", "..");

// binaryen.js's expression editors, which its type declarations leave out.
const editors = binaryen as unknown as {
  Block: { getNumChildren(e: number): number; getChildAt(e: number, i: number): number; insertChildAt(e: number, i: number, child: number): void };
  Loop: { setBody(e: number, body: number): void };
  If: { setIfTrue(e: number, arm: number): void; setIfFalse(e: number, arm: number): void };
  Function: { setBody(f: number, body: number): void };
};
const WARM_UP = 200;
const MEASURED = 1000;
const REQUESTS_PER_TICK = 100;

/** A counting copy of the release module; returns its path and its functions' names (from build/filter.wat). */
function countingModule(dir: string): { path: string; names: string[] } {
  const wat = readFileSync(join(ROOT, "build", "filter.wat"), "utf8");
  const watNames = [...wat.matchAll(/^ \(func (\S+)/gm)].map((m) => m[1]);
  const m = binaryen.readBinary(readFileSync(join(ROOT, "build", "filter.wasm")));
  m.setFeatures(binaryen.Features.All);
  const add = (counter: string, n: number) => m.global.set(counter, m.i64.add(m.global.get(counter, binaryen.i64), m.i64.const(n, 0)));
  const counted = (counter: string, expr: number, n: number) => m.block(null, [add(counter, n), expr], binaryen.getExpressionType(expr));
  let counter = "";
  // The instructions of `e` up to the next nested run; nested runs get counters of their own.
  const cost = (e: number): number => {
    if (e === 0) return 0;
    const info = binaryen.getExpressionInfo(e) as any;
    switch (info.id) {
      case binaryen.BlockId: {
        const n = editors.Block.getNumChildren(e);
        const costs = Array.from({ length: n }, (_, i) => cost(editors.Block.getChildAt(e, i)));
        for (let i = n - 1; i >= 0; i--) if (costs[i] > 0) editors.Block.insertChildAt(e, i, add(counter, costs[i]));
        return 0;
      }
      case binaryen.LoopId: {
        const c = cost(info.body);
        if (c > 0) editors.Loop.setBody(e, counted(counter, info.body, c));
        return 0;
      }
      case binaryen.IfId: {
        const t = cost(info.ifTrue);
        if (t > 0) editors.If.setIfTrue(e, counted(counter, info.ifTrue, t));
        const f = cost(info.ifFalse);
        if (f > 0) editors.If.setIfFalse(e, counted(counter, info.ifFalse, f));
        return 1 + cost(info.condition);
      }
      case binaryen.LocalGetId:
      case binaryen.ConstId:
      case binaryen.NopId:
        return 0;
      case binaryen.DropId:
        return cost(info.value);
      case binaryen.CallId:
      case binaryen.CallIndirectId:
        return 1 + (info.operands as number[]).reduce((s, o) => s + cost(o), 0) + (info.id === binaryen.CallIndirectId ? cost(info.target) : 0);
      case binaryen.BinaryId:
        return 1 + cost(info.left) + cost(info.right);
      case binaryen.SelectId:
        return 1 + cost(info.ifTrue) + cost(info.ifFalse) + cost(info.condition);
      case binaryen.StoreId:
        return 1 + cost(info.ptr) + cost(info.value);
      case binaryen.MemoryCopyId:
        return 1 + cost(info.dest) + cost(info.source) + cost(info.size);
      case binaryen.MemoryFillId:
        return 1 + cost(info.dest) + cost(info.value) + cost(info.size);
      case binaryen.BreakId:
      case binaryen.SwitchId:
        return 1 + cost(info.condition) + cost(info.value);
      case binaryen.LoadId:
        return 1 + cost(info.ptr);
      case binaryen.MemoryGrowId:
        return 1 + cost(info.delta);
      case binaryen.LocalSetId:
      case binaryen.GlobalSetId:
      case binaryen.UnaryId:
      case binaryen.ReturnId:
        return 1 + cost(info.value);
      case binaryen.GlobalGetId:
      case binaryen.MemorySizeId:
      case binaryen.UnreachableId:
        return 1;
      default:
        throw new Error(`op_profile: no cost for expression kind ${info.id}`);
    }
  };
  const names: string[] = [];
  for (let i = 0, n = m.getNumFunctions(); i < n; i++) {
    const f = m.getFunctionByIndex(i);
    const info = binaryen.getFunctionInfo(f);
    if (info.module) continue; // an import
    const index = names.length;
    names.push(watNames[index] ?? info.name);
    const ops = `__ops_${index}`;
    const calls = `__calls_${index}`;
    for (const g of [ops, calls]) {
      m.addGlobal(g, binaryen.i64, true, m.i64.const(0, 0));
      m.addGlobalExport(g, g);
    }
    counter = ops;
    let body = info.body;
    const c = cost(body);
    if (c > 0) body = counted(ops, body, c);
    editors.Function.setBody(f, counted(calls, body, 1));
  }
  if (!m.validate()) throw new Error("op_profile: the counting module does not validate");
  const path = join(dir, "counting.wasm");
  writeFileSync(path, m.emitBinary());
  return { path, names };
}

type Counts = Array<[bigint, bigint]>;

function reader(exports: Record<string, unknown>, names: string[]): () => Counts {
  const globals = names.map((_, i) => [exports[`__ops_${i}`], exports[`__calls_${i}`]] as [WebAssembly.Global, WebAssembly.Global]);
  return () => globals.map(([ops, calls]) => [ops.value as bigint, calls.value as bigint]);
}

/** Per phase, what `measure` added to each function's counters. */
class Phases {
  readonly totals = new Map<string, Counts>();
  constructor(private readonly read: () => Counts) {}

  measure(phase: string, run: () => void): void {
    const before = this.read();
    run();
    const after = this.read();
    const total = this.totals.get(phase) ?? before.map((): [bigint, bigint] => [0n, 0n]);
    for (let i = 0; i < after.length; i++) {
      total[i][0] += after[i][0] - before[i][0];
      total[i][1] += after[i][1] - before[i][1];
    }
    this.totals.set(phase, total);
  }
}

function table(names: string[], phase: string, counts: Counts, per: number, top: number): string[] {
  const rows = counts
    .map(([ops, calls], i) => ({ name: names[i], ops: Number(ops) / per, calls: Number(calls) / per }))
    .filter((r) => r.ops > 0 || r.calls > 0)
    .sort((a, b) => b.ops - a.ops);
  const ops = rows.reduce((s, r) => s + r.ops, 0);
  const calls = rows.reduce((s, r) => s + r.calls, 0);
  return [
    `${phase}: ${ops.toFixed(0)} wasm instructions and ${calls.toFixed(1)} calls per request`,
    ...rows
      .slice(0, top)
      .map((r) => `${r.ops.toFixed(0).padStart(8)} ${((100 * r.ops) / ops).toFixed(1).padStart(5)}% ${r.calls.toFixed(2).padStart(8)}  ${r.name}`),
  ];
}

/** The pwhost bench's requests (GET /pets/42?key=bench, shipped configuration, a host that does not batch properties). */
function pwhostProfile(path: string, names: string[], top: number): string[] {
  const shipped = JSON.parse(readFileSync(join(ROOT, "build", "deploy", "plugin-config.json"), "utf8")) as Record<string, unknown>;
  delete shipped.tcpClientConfig;
  const emu = new FilterEmulator(shipped, path, { propertyBatches: false });
  const grant = {
    precondition: { status: { code: 0 }, validDuration: { seconds: 600 }, validUseCount: 100_000 },
    quotas: { requestcount: { grantedAmount: 1_000_000, validDuration: { seconds: 600 } } },
  };
  const answer = () => {
    for (const call of emu.calls) if (!call.answered && !call.cancelled) emu.answer(call, { respond: call.method === "Report" ? {} : grant });
  };
  const headers: Array<[string, string]> = [
    [":method", "GET"],
    [":path", "/pets/42?key=bench"],
    [":authority", "petstore.demo.svc.cluster.local"],
    [":scheme", "http"],
  ];
  const phases = new Phases(reader((emu.vm as unknown as { exports: Record<string, unknown> }).exports, names));
  for (let r = 0; r < WARM_UP + MEASURED; r++) {
    const counted = r >= WARM_UP;
    const step = (phase: string, run: () => void) => (counted ? phases.measure(phase, run) : run());
    let id = 0;
    step("request headers (context create, on_request_headers)", () => {
      id = emu.request(headers).id;
      answer();
    });
    step("response headers, log, done, delete", () => {
      emu.finish(id, 200);
      answer();
    });
    if ((r + 1) % REQUESTS_PER_TICK === 0) step("ticks (the report batch sent)", () => emu.advance(1000));
    else emu.nowNanos += 10_000_000n;
  }
  return [...phases.totals].flatMap(([phase, counts]) => [...table(names, phase, counts, MEASURED, top), ""]);
}

/**
 * The sidecar's requests as its host gives them (sidecar_like_requests.ts):
 * its listener's seven request headers, the connection's addresses and the
 * route's destination service read in one batched call, a 200 with four
 * headers, an upstream address and the outcome's sizes.
 */
function sidecarProfile(path: string, names: string[], top: number): string[] {
  const shipped = JSON.parse(readFileSync(join(ROOT, "build", "deploy", "plugin-config.json"), "utf8")) as Record<string, unknown>;
  delete shipped.tcpClientConfig;
  const emu = new FilterEmulator(shipped, path, { propertyBatches: true });
  const grant = {
    precondition: { status: { code: 0 }, validDuration: { seconds: 600 }, validUseCount: 100_000 },
    quotas: { requestcount: { grantedAmount: 1_000_000, validDuration: { seconds: 600 } } },
  };
  const answer = () => {
    for (const call of emu.calls) if (!call.answered && !call.cancelled) emu.answer(call, { respond: call.method === "Report" ? {} : grant });
  };
  const phases = new Phases(reader((emu.vm as unknown as { exports: Record<string, unknown> }).exports, names));
  for (let r = 0; r < WARM_UP + MEASURED; r++) {
    const counted = r >= WARM_UP;
    const step = (phase: string, run: () => void) => (counted ? phases.measure(phase, run) : run());
    const socket = BENCH_SOCKETS[r % BENCH_SOCKETS.length];
    let id = 0;
    step("request headers (context create, on_request_headers)", () => {
      id = emu.request(benchRequestHeaders(), {
        "source.address": `${socket.remoteAddress}:${socket.remotePort}`,
        "destination.address": `${socket.localAddress}:${socket.localPort}`,
        "connection.mtls": false,
        ...BENCH_ROUTE,
      }).id;
      answer();
    });
    step("response headers, log, done, delete", () => {
      const outcome = benchOutcome();
      emu.finish(id, outcome.code, benchResponseHeaders().slice(1), {
        "upstream.address": BENCH_UPSTREAM_ADDRESS,
        "request.total_size": BigInt(outcome.requestBytes),
        "response.total_size": BigInt(outcome.responseBytes),
        "response.size": BigInt(outcome.responseBytes),
      });
      answer();
    });
    if ((r + 1) % REQUESTS_PER_TICK === 0) step("ticks (the report batch sent)", () => emu.advance(1000));
    else emu.nowNanos += 10_000_000n;
  }
  return [...phases.totals].flatMap(([phase, counts]) => [...table(names, phase, counts, MEASURED, top), ""]);
}

/** The hot path bench's four-request mix at 50 patterns (filter_evaluate in place). */
function hotPathProfile(path: string, names: string[], top: number): string[] {
  const filter = FilterModule.load(path);
  const configured = filter.configure(pluginConfig(config(50)));
  if ("error" in configured) throw new Error(configured.error);
  const serialized = requestInputs(50).map(serializeRequest);
  for (const s of serialized) filter.evaluateSerialized(configured.handle, s);
  const exports = Object.values(filter as unknown as Record<string, unknown>).find((v) => v !== null && typeof v === "object" && "__ops_0" in v);
  const phases = new Phases(reader(exports as Record<string, unknown>, names));
  phases.measure("hot path (50 patterns, 4-request mix)", () => {
    for (let i = 0; i < MEASURED; i++) for (const s of serialized) filter.evaluateSerialized(configured.handle, s);
  });
  return [...phases.totals].flatMap(([phase, counts]) => table(names, phase, counts, MEASURED * serialized.length, top));
}

const [which = "pwhost", topArg = "30"] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), "mesh-op-profile-"));
try {
  const { path, names } = countingModule(dir);
  const lines =
    which === "hot-path"
      ? hotPathProfile(path, names, Number(topArg))
      : which === "sidecar"
        ? sidecarProfile(path, names, Number(topArg))
        : pwhostProfile(path, names, Number(topArg));
  for (const line of lines) console.log(line);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
