// connectVm: hub answers delivered to the VM that asked, never thrown into
// the event loop; and the whole path — the real filter module in ProxyWasmVm,
// the transport, a real hubs process — allowing, denying, and failing closed
// with retries when the hub is gone.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parseClusters } from "../../host/hub/clusters.ts";
import { type AnswerSink, connectVm, hostRetriesProperty, type Undelivered } from "../../host/hub/dispatch.ts";
import { type FailedAttempt, type HubCallResult, HubTransport } from "../../host/hub/transport.ts";
import { type PropertyResolver, ProxyWasmVm, propertyValue } from "../../host/wasm/abi_host.ts";
import { Action, type GrpcCall } from "../../host/wasm/abi_types.ts";
import { RELEASE_WASM } from "../../host/wasm/filter_module.ts";
import { GRPC_CODES } from "../../host/wire/status_codes.ts";
import { startHub, tempDir, writeConfig, type HubProcess } from "../hubs/support/hub_process.ts";
import { PROPERTIES, REQUEST, pluginConfig } from "../wasm/emulator_support.ts";
import { grpcCall } from "./support/peers.ts";

async function until(ok: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A VM stand-in recording what it is told. */
class RecordingVm implements AnswerSink {
  failed = false;
  throwOnAnswer = false;
  readonly answers: Array<{ kind: "receive" | "close"; rootId: number; token: number; bytes?: Uint8Array; code?: number; message?: string }> = [];
  grpcReceive(rootId: number, token: number, bytes: Uint8Array): void {
    if (this.throwOnAnswer) throw new Error("unknown root context");
    this.answers.push({ kind: "receive", rootId, token, bytes });
  }
  grpcClose(rootId: number, token: number, code: number, message: string): void {
    if (this.throwOnAnswer) throw new Error("unknown root context");
    this.answers.push({ kind: "close", rootId, token, code, message });
  }
}

const answering = (result: HubCallResult) => ({ call: async (_: GrpcCall) => result });

describe("connectVm", () => {
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);
  before(() => process.on("unhandledRejection", onRejection));
  after(() => {
    process.off("unhandledRejection", onRejection);
    assert.deepEqual(rejections, [], "nothing escaped into the event loop");
  });

  it("an OK answer becomes grpcReceive for the call's root and token, asynchronously", async () => {
    const vm = new RecordingVm();
    const dispatch = connectVm(vm, answering({ ok: true, message: new Uint8Array([7]), attempts: 1 }));
    const call = grpcCall({ rootId: 3 });
    dispatch(call);
    assert.equal(vm.answers.length, 0, "not answered inside proxy_grpc_call");
    await until(() => vm.answers.length === 1, "the answer");
    assert.deepEqual(vm.answers[0], { kind: "receive", rootId: 3, token: call.token, bytes: new Uint8Array([7]) });
  });

  it("a failure becomes grpcClose with its code and message", async () => {
    const vm = new RecordingVm();
    const dispatch = connectVm(vm, answering({ ok: false, code: 14, message: "upstream request timeout", attempts: 3 }));
    const call = grpcCall();
    dispatch(call);
    await until(() => vm.answers.length === 1, "the answer");
    assert.deepEqual(vm.answers[0], { kind: "close", rootId: 1, token: call.token, code: 14, message: "upstream request timeout" });
  });

  it("a VM that failed meanwhile is not called; the answer is reported undelivered", async () => {
    const vm = new RecordingVm();
    const dropped: Undelivered[] = [];
    let release!: (r: HubCallResult) => void;
    const dispatch = connectVm(vm, { call: () => new Promise((r) => (release = r)) }, { onUndelivered: (u) => dropped.push(u) });
    dispatch(grpcCall());
    vm.failed = true;
    release({ ok: true, message: new Uint8Array(), attempts: 1 });
    await until(() => dropped.length === 1, "the report");
    assert.equal(dropped[0].reason, "vm-failed");
    assert.equal(vm.answers.length, 0);
  });

  it("a callback that throws (root gone, trap) is caught and reported, even when the observer throws too", async () => {
    const vm = new RecordingVm();
    vm.throwOnAnswer = true;
    const dropped: Undelivered[] = [];
    const dispatch = connectVm(vm, answering({ ok: true, message: new Uint8Array(), attempts: 1 }), {
      onUndelivered: (u) => {
        dropped.push(u);
        throw new Error("observer bug");
      },
    });
    dispatch(grpcCall());
    await until(() => dropped.length === 1, "the report");
    assert.equal(dropped[0].reason, "callback-threw");
    assert.match(String(dropped[0].error), /unknown root context/);
    await new Promise((r) => setTimeout(r, 10));
  });

  it("a transport that throws or rejects is answered as INTERNAL, so the module's fail policy decides", async () => {
    const vm = new RecordingVm();
    connectVm(vm, { call: () => Promise.reject(new Error("boom")) })(grpcCall());
    connectVm(vm, {
      call: () => {
        throw new Error("sync boom");
      },
    })(grpcCall());
    assert.equal(vm.answers.length, 0, "not answered inside proxy_grpc_call");
    await until(() => vm.answers.length === 2, "both answers");
    assert.deepEqual(vm.answers.map((a) => [a.code, a.message]).sort(), [
      [GRPC_CODES.INTERNAL, "hub transport failed: boom"],
      [GRPC_CODES.INTERNAL, "hub transport failed: sync boom"],
    ]);
  });
});

const RULES = `
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: deny-admin}
spec:
  match:
  - clause:
      request.path: {prefix: /admin}
  actions:
  - deny: {code: PERMISSION_DENIED, message: "admins only"}
`;

describe("the filter module, the transport and a real hubs server", () => {
  let hub: HubProcess;
  let transport: HubTransport;
  let vm: ProxyWasmVm;
  let rootId: number;
  const failed: FailedAttempt[] = [];
  const resolver: PropertyResolver = (path) => {
    const value = (PROPERTIES as Record<string, string | boolean>)[path.join(".")];
    if (value === undefined) return undefined;
    return typeof value === "string" ? propertyValue.string(value) : propertyValue.bool(value);
  };

  before(async () => {
    const dir = tempDir("hub-dispatch-");
    writeConfig(dir, "rules.yaml", RULES);
    hub = await startHub(["--configStoreURL", `fs://${dir}`]);
    transport = new HubTransport({ clusters: parseClusters([`hub_server=${hub.listeners.grpc}`]), onAttemptFailed: (a) => failed.push(a) });
    let grpcCall: (call: GrpcCall) => void = () => {};
    vm = new ProxyWasmVm(RELEASE_WASM, {
      log: () => {},
      now: () => BigInt(Date.now()) * 1_000_000n,
      tickPeriod: () => {},
      grpcCall: (call) => grpcCall(call),
      // The transport retries: the module must not (it has no timer here either).
      rootProperties: hostRetriesProperty,
    });
    grpcCall = connectVm(vm, transport);
    const config = pluginConfig({
      failPolicy: { policy: "FAIL_CLOSE", maxRetry: 2, baseRetryWait: "0.050s", maxRetryWait: "0.1s" },
      transport: { disableCheckCache: true },
    });
    const started = vm.startRoot(JSON.stringify(config));
    assert.ok(started.accepted, "the filter accepted its configuration");
    rootId = started.rootId;
  });
  after(async () => {
    transport.close();
    await hub.stop();
  });

  /** Sends request headers; resolves once the module continued the stream or replied locally. */
  async function request(path: string): Promise<{ continued: boolean; status?: number; body?: string; ms: number }> {
    const started = performance.now();
    const id = vm.createStream(rootId, resolver);
    const action = vm.requestHeaders(id, Object.entries({ ...REQUEST, ":path": path }), true);
    let continued = action === Action.Continue;
    let reply = vm.takeLocalReply(id);
    await until(() => {
      continued ||= vm.takeContinue(id);
      reply ??= vm.takeLocalReply(id);
      return continued || reply !== undefined;
    }, `a decision for ${path}`);
    vm.finishStream(id);
    return { continued, status: reply?.status, body: reply?.body, ms: performance.now() - started };
  }

  it("an allowed request continues after the hub's answer", async () => {
    const r = await request("/orders/7");
    assert.equal(r.continued, true);
  });

  it("a hub denial becomes the filter's 403", async () => {
    const r = await request("/admin/users");
    assert.equal(r.continued, false);
    assert.equal(r.status, 403);
  });

  it("hub stopped, FAIL_CLOSE with maxRetry 2: 503 after three attempts, within a bounded time", async () => {
    await hub.stop();
    failed.length = 0;
    const r = await request("/orders/8");
    assert.equal(r.continued, false);
    assert.equal(r.status, 503);
    assert.match(r.body ?? "", /^UNAVAILABLE:upstream connect error or disconnect\/reset before headers/);
    assert.equal(failed.length, 3, "one attempt and two retries");
    assert.deepEqual(
      failed.map((f) => f.retryInMs === undefined),
      [false, false, true],
    );
    assert.ok(r.ms < 7000, `decided after ${r.ms} ms (the retry waits plus 5 s of margin for a loaded machine)`);
  });
});
