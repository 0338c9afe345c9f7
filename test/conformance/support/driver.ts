// Runs build/filter.wasm (or the debug build) on the real proxy-wasm host:
// pwdriver, proxy-wasm-cpp-host on WAMR (../shared/tools/pwhost), built by
// `npm run conformance` (build/conformance.mjs), which passes its path in
// PWDRIVER. The driver prints every ABI call the module makes; this file turns
// that output into values the scenarios assert on.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { type AttributeMap, GlobalDictionary, attributeText, decodeAttributes } from "../../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../../host/wire/global_words.ts";
import { messageType } from "../../../host/wire/protos.ts";
import { invalidStrings } from "../../../host/wire/utf8_strings.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
export const MODULES = {
  release: join(ROOT, "build", "filter.wasm"),
  debug: join(ROOT, "build", "filter.debug.wasm"),
} as const;
export type Variant = keyof typeof MODULES;

/** Exit statuses of pwdriver (its README). */
export const EXIT = { ok: 0, usage: 1, moduleRefused: 2, pluginRejected: 3, vmFailure: 4 } as const;

export function pwdriver(): string {
  const path = process.env.PWDRIVER;
  if (!path) throw new Error("PWDRIVER is not set: run the scenarios with `npm run conformance`, which builds the real host");
  return path;
}

export interface GrpcCall {
  /** Position in the output's lines. */
  line: number;
  vm: string;
  cluster: string;
  service: string;
  method: string;
  metadata: string;
  timeoutMs: number;
  token: number;
  message: Buffer;
}

export interface LocalReply {
  line: number;
  status: number;
  body: string;
  details: string;
}

export interface DriverRun {
  status: number;
  output: string;
  lines: string[];
  /** Calls made by the worker VM (the canary serves no stream). */
  calls: GrpcCall[];
  replies: LocalReply[];
  /** `--> outcome: …` of each stream, in order. */
  outcomes: string[];
  /** Final metric values from the summary. */
  metrics: Map<string, bigint>;
  /** Index of the first line matching `re` (from `from`), or -1. */
  indexOf(re: RegExp, from?: number): number;
}

const GRPC_CALL =
  /^\[(\w+) ctx \d+\] grpc_call cluster="([^"]*)" service="([^"]*)" method="([^"]*)" metadata=(\{.*\}) message=\d+ bytes timeout=(\d+)ms -> token (\d+)$/;
const LOCAL_REPLY = /^\[worker ctx \d+\] local_reply status=(\d+) body="((?:[^"\\]|\\.)*)" details="((?:[^"\\]|\\.)*)"/;

/** Runs the driver on a module with the given options (always `--full`: no truncated messages). */
export function runDriver(variant: Variant, args: string[]): DriverRun {
  const run = spawnSync(pwdriver(), [MODULES[variant], "--full", ...args], { encoding: "utf8", maxBuffer: 256 << 20, timeout: 600_000 });
  if (run.error) throw run.error;
  const output = `${run.stdout}${run.stderr}`;
  const lines = run.stdout.split("\n");
  const calls: GrpcCall[] = [];
  const replies: LocalReply[] = [];
  const outcomes: string[] = [];
  const metrics = new Map<string, bigint>();
  lines.forEach((text, line) => {
    const call = GRPC_CALL.exec(text);
    if (call && call[1] === "worker") {
      const hex = /^\s+message\[\d+\] hex=([0-9a-f]*)$/.exec(lines[line + 1] ?? "");
      calls.push({
        line,
        vm: call[1],
        cluster: call[2],
        service: call[3],
        method: call[4],
        metadata: call[5],
        timeoutMs: Number(call[6]),
        token: Number(call[7]),
        message: Buffer.from(hex?.[1] ?? "", "hex"),
      });
    }
    const reply = LOCAL_REPLY.exec(text);
    if (reply) replies.push({ line, status: Number(reply[1]), body: JSON.parse(`"${reply[2]}"`), details: JSON.parse(`"${reply[3]}"`) });
    const outcome = /--> outcome: (.*)$/.exec(text);
    if (outcome && text.startsWith("[worker")) outcomes.push(outcome[1]);
    const metric = /^metric counter (\S+) = (\d+)$/.exec(text);
    if (metric) metrics.set(metric[1], BigInt(metric[2]));
  });
  return {
    status: run.status ?? -1,
    output,
    lines,
    calls,
    replies,
    outcomes,
    metrics,
    indexOf(re: RegExp, from = 0) {
      for (let i = from; i < lines.length; i++) if (re.test(lines[i])) return i;
      return -1;
    },
  };
}

const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);

/** A CheckResponse (proto3 JSON of mesh.hub.v1.CheckResponse) as the driver's `0:hex:…` answer. */
export function checkAnswer(response: Record<string, unknown>): string {
  const type = messageType("mesh.hub.v1.CheckResponse");
  return `0:hex:${Buffer.from(type.encode(type.fromObject(response)).finish()).toString("hex")}`;
}

export const ALLOW = (validSeconds = 60, validUseCount = 1000) =>
  checkAnswer({ precondition: { status: { code: 0 }, validDuration: { seconds: validSeconds }, validUseCount } });

export interface DecodedCheck {
  attributes: AttributeMap;
  quotas: Record<string, { amount?: unknown; bestEffort?: boolean }>;
}

export function decodeCheck(bytes: Buffer): DecodedCheck {
  const type = messageType("mesh.hub.v1.CheckRequest");
  const m = type.toObject(type.decode(bytes), { longs: String }) as { attributes?: never; quotas?: DecodedCheck["quotas"] };
  return { attributes: decodeAttributes(m.attributes, { dictionary: DICTIONARY }), quotas: m.quotas ?? {} };
}

/** Each report entry's attributes (independent encoding with the shared default words). */
export function decodeReport(bytes: Buffer): AttributeMap[] {
  const type = messageType("mesh.hub.v1.ReportRequest");
  const m = type.toObject(type.decode(bytes), { longs: String }) as { attributes?: never[]; defaultWords?: string[] };
  return (m.attributes ?? []).map((a) => decodeAttributes(a, { dictionary: DICTIONARY, defaultWords: m.defaultWords ?? [] }));
}

export const text = (attributes: AttributeMap, name: string) => {
  const v = attributes.get(name);
  return v === undefined ? undefined : attributeText(v);
};

/** `--header` options for a request. */
export function request(method: string, path: string, headers: Record<string, string> = {}): string[] {
  const all = { ":method": method, ":path": path, ":authority": "petstore.demo.svc.cluster.local", ":scheme": "http", ...headers };
  return Object.entries(all).flatMap(([k, v]) => ["--header", `${k}=${v}`]);
}

/**
 * The `string` fields of a message of `typeName` that are not valid UTF-8
 * (their paths): the hub refuses such a message (host/wire/utf8_strings.ts).
 */
export function invalidUtf8Strings(typeName: string, bytes: Uint8Array): string[] {
  return invalidStrings(messageType(typeName), bytes).map((s) => s.path);
}

/** `x-mesh-attributes` (base64 of mesh.hub.v1.Attributes) with one string attribute given as raw bytes. */
export function forwardedAttributeHeader(name: string, valueBytes: Uint8Array): string {
  const len = (n: number) => {
    const out: number[] = [];
    for (; n > 127; n >>>= 7) out.push((n & 127) | 128);
    out.push(n);
    return out;
  };
  const field = (no: number, b: Uint8Array | number[]) => [(no << 3) | 2, ...len(b.length), ...b];
  const value = field(2, valueBytes); // AttributeValue.string_value, bytes as given
  const entry = [...field(1, [...Buffer.from(name)]), ...field(2, value)];
  return Buffer.from(field(1, entry)).toString("base64");
}
