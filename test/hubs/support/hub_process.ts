// Test support: a real `hubs server` process on loopback and a gRPC client for it.
import * as grpc from "@grpc/grpc-js";
import type { ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { encodeAttributes, GlobalDictionary, MessageWords, type AttributeMap, type AttributeValue } from "../../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../../host/wire/global_words.ts";
import { messageType } from "../../../host/wire/protos.ts";
import { startDaemon, tempDir as ownedTempDir, waitFor as pollFor } from "../../support/processes.ts";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const HUBS_BIN = join(ROOT, "build", "out", "hubs.mjs");
export const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);
const LISTENING = "hubs listening ";

export interface Listeners {
  grpc: string;
  grpcPort: number;
  monitoring: string;
  monitoringPort: number;
  ctrlz: string;
  ctrlzPort: number;
}

export interface HubProcess {
  proc: ChildProcess;
  listeners: Listeners;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  /** `127.0.0.1:<monitoring port>` base URL. */
  monitoringUrl: string;
  ctrlzUrl: string;
  client: HubClient;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** A temporary folder, removed when the test file's process exits. */
export function tempDir(prefix = "hubs-test-"): string {
  return ownedTempDir(prefix);
}

export function writeConfig(dir: string, file: string, yaml: string): void {
  writeFileSync(join(dir, file), yaml);
}

/**
 * Starts `node build/out/hubs.mjs server` with every listener on an ephemeral
 * loopback port, as a process the test file owns (test/support/processes.ts).
 * `timeoutMs` is raised to the tests' readiness minimum; `bin` runs another
 * build (a benchmark's before and after).
 */
export async function startHub(args: string[] = [], timeoutMs?: number, bin = HUBS_BIN): Promise<HubProcess> {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run node build/build.mjs first`);
  const hasAddress = args.some((a) => a === "--address" || a.startsWith("--address="));
  const daemon = await startDaemon<Listeners>(
    bin,
    [
      "server",
      ...(hasAddress ? [] : ["--address", "tcp://127.0.0.1:0"]),
      "--monitoringPort",
      "0",
      "--ctrlz_port",
      "0",
      "--ctrlz_address",
      "127.0.0.1",
      ...args,
    ],
    LISTENING,
    timeoutMs,
  );
  const listeners = daemon.listening;
  const client = new HubClient(listeners.grpc);
  return {
    proc: daemon.proc,
    listeners,
    output: daemon.output,
    monitoringUrl: `http://127.0.0.1:${listeners.monitoringPort}`,
    ctrlzUrl: `http://127.0.0.1:${listeners.ctrlzPort}`,
    client,
    stop: async () => {
      client.close();
      return daemon.stop("SIGTERM");
    },
  };
}

const raw = (b: Buffer) => b;
const rawMethod = (name: string) => ({
  path: `/mesh.hub.v1.Hub/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: raw,
  requestDeserialize: raw,
  responseSerialize: raw,
  responseDeserialize: raw,
});
const HubStub = grpc.makeGenericClientConstructor({ Check: rawMethod("Check"), Report: rawMethod("Report") }, "Hub");

export interface CallResult<T> {
  code: number;
  details: string;
  response?: T;
}

/** Decoded CheckResponse, int64 as numbers, enums as numbers. */
export interface CheckResponseJs {
  precondition: {
    status?: { code?: number; message?: string };
    validDuration?: { seconds?: number; nanos?: number };
    validUseCount?: number;
    referencedAttributes?: { words?: string[]; attributeMatches?: Array<{ name?: number; condition?: number; mapKey?: number }> };
  };
  quotas?: Record<string, { grantedAmount?: number; validDuration?: { seconds?: number; nanos?: number }; status?: { code?: number; message?: string } }>;
}

export class HubClient {
  private readonly stub: grpc.Client & Record<string, Function>;

  constructor(address: string) {
    this.stub = new HubStub(address, grpc.credentials.createInsecure(), { "grpc.max_send_message_length": -1, "grpc.max_receive_message_length": -1 }) as never;
  }

  callRaw(method: "Check" | "Report", bytes: Buffer): Promise<CallResult<Buffer>> {
    return new Promise((resolve) => {
      this.stub[method](bytes, { deadline: Date.now() + 60_000 }, (err: grpc.ServiceError | null, res: Buffer) => {
        resolve(err ? { code: err.code, details: err.details } : { code: 0, details: "", response: res });
      });
    });
  }

  async check(request: object): Promise<CallResult<CheckResponseJs>> {
    const type = messageType("mesh.hub.v1.CheckRequest");
    const r = await this.callRaw("Check", Buffer.from(type.encode(type.fromObject(request)).finish()));
    if (!r.response) return { code: r.code, details: r.details };
    const resType = messageType("mesh.hub.v1.CheckResponse");
    return { code: 0, details: "", response: resType.toObject(resType.decode(r.response), { longs: Number }) as CheckResponseJs };
  }

  async report(request: object): Promise<CallResult<Buffer>> {
    const type = messageType("mesh.hub.v1.ReportRequest");
    return this.callRaw("Report", Buffer.from(type.encode(type.fromObject(request)).finish()));
  }

  close(): void {
    this.stub.close();
  }
}

type Plain = string | bigint | boolean | number | Record<string, string> | Uint8Array;

/** `{ "request.path": "/a", "response.code": 200n, "request.headers": {…} }` → an attribute map (numbers are doubles). */
export function attrs(values: Record<string, Plain>): AttributeMap {
  const m: AttributeMap = new Map();
  for (const [k, v] of Object.entries(values)) {
    let a: AttributeValue;
    if (typeof v === "string") a = { stringValue: v };
    else if (typeof v === "bigint") a = { int64Value: v };
    else if (typeof v === "boolean") a = { boolValue: v };
    else if (typeof v === "number") a = { doubleValue: v };
    else if (v instanceof Uint8Array) a = { bytesValue: v };
    else a = { stringMapValue: { entries: v } };
    m.set(k, a);
  }
  return m;
}

/** A CheckRequest object for protobufjs `fromObject`. */
export function checkRequest(values: Record<string, Plain>, quotas: Record<string, { amount: number; bestEffort?: boolean }> = {}, extra: object = {}): object {
  return { attributes: encodeAttributes(attrs(values), DICTIONARY), globalWordCount: DICTIONARY.size, quotas, ...extra };
}

/** A ReportRequest: INDEPENDENT_ENCODING with shared default_words (what the client sends). */
export function reportRequest(entries: Array<Record<string, Plain>>): object {
  const words = new MessageWords(DICTIONARY);
  const attributes = entries.map((e) => encodeAttributes(attrs(e), DICTIONARY, words));
  return { attributes, defaultWords: words.words, globalWordCount: DICTIONARY.size, repeatedAttributesSemantics: 1 };
}

/** Polls until `fn` returns something other than undefined or false (test/support/processes.ts `waitFor`; limits of at least 60 s). */
export function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs?: number, everyMs = 50): Promise<T> {
  return pollFor(what, fn, timeoutMs, everyMs);
}

export async function metricsText(hub: HubProcess): Promise<string> {
  return (await fetch(`${hub.monitoringUrl}/metrics`)).text();
}

/** The value of one sample line, e.g. metricValue(text, 'hub_config_rule_configs_total'). */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
