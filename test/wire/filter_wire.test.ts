// The filter's hub wire codec (assembly/hub, through assembly/embed/wire_exports.ts)
// against the .proto files as protobufjs reads them:
// - check and report requests encoded by the module decode with protobufjs
//   and, with their indexes expanded (GLOBAL_WORDS for i >= 0, the message
//   words for i < 0), equal the attributes that went in, for every value kind;
// - check responses encoded by protobufjs decode in the module exactly;
// - no byte string makes the response decoder trap.
// Both builds are tested: the debug one (runtime checks) and the release one.
//
// Needs the modules: node build/build.mjs --wasm-only
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { messageType, PROTO_DIR } from "../../host/wire/protos.ts";
import { grpcCodeName } from "../../host/wire/status_codes.ts";
import { callReport, encodeReport, loadWireCodec, newBuffer, withPinned, type WireCodec } from "../support/wire_codec.ts";

const root = join(import.meta.dirname ?? ".", "..", "..");
const Attributes = messageType("mesh.hub.v1.Attributes");
const CheckRequest = messageType("mesh.hub.v1.CheckRequest");
const ReportRequest = messageType("mesh.hub.v1.ReportRequest");
const CheckResponse = messageType("mesh.hub.v1.CheckResponse");
const RUNS = Number(process.env.WIRE_RUNS ?? 200);

type Wasm = WireCodec;

const load = (file: string): Wasm => loadWireCodec(join(root, "build", file));

function encodeCheck(wasm: Wasm, attributes: Uint8Array, dedupId: string, quotasJson: string, bestEffort: boolean): Uint8Array {
  return withPinned(
    wasm,
    [() => newBuffer(wasm, attributes), () => wasm.__newString(dedupId), () => wasm.__newString(quotasJson)],
    (a, d, q) => new Uint8Array(wasm.__getArrayBuffer(wasm.wire_encode_check(a, d, q, bestEffort ? 1 : 0))),
  );
}

function decodeResponse(wasm: Wasm, bytes: Uint8Array): unknown {
  return JSON.parse(withPinned(wasm, [() => newBuffer(wasm, bytes)], (p) => wasm.__getString(wasm.wire_decode_check_response(p))));
}

// ---------------------------------------------------------------------------
// Attribute values in one comparable form: int64 as decimal strings, bytes as
// base64, times as {seconds, nanos} with defaults filled in.

type Plain = Record<string, unknown>;

interface TimeObject {
  seconds?: string | number;
  nanos?: number;
}

function time(t: TimeObject | undefined): { seconds: string; nanos: number } {
  return { seconds: String(t?.seconds ?? "0"), nanos: t?.nanos ?? 0 };
}

/** An AttributeValue as protobufjs's toObject gives it (longs: String, bytes: String). */
function plainValue(v: Record<string, unknown>): Plain {
  if ("stringValue" in v) return { stringValue: v.stringValue };
  if ("int64Value" in v) return { int64Value: String(v.int64Value) };
  if ("doubleValue" in v) return { doubleValue: v.doubleValue };
  if ("boolValue" in v) return { boolValue: v.boolValue };
  if ("bytesValue" in v) return { bytesValue: v.bytesValue ?? "" };
  if ("timestampValue" in v) return { timestampValue: time(v.timestampValue as TimeObject) };
  if ("durationValue" in v) return { durationValue: time(v.durationValue as TimeObject) };
  if ("stringMapValue" in v) {
    const entries = ((v.stringMapValue as { entries?: Record<string, string> }).entries ?? {}) as Record<string, string>;
    return { stringMapValue: sortKeys(entries) };
  }
  throw new Error(`no value in ${JSON.stringify(v)}`);
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

/** What the module was given: the Attributes message decoded back by protobufjs. */
function plainAttributes(bytes: Uint8Array): Plain {
  const obj = Attributes.toObject(Attributes.decode(bytes), { longs: String, bytes: String }) as { attributes?: Record<string, Record<string, unknown>> };
  const out: Plain = {};
  for (const [name, v] of Object.entries(obj.attributes ?? {})) out[name] = plainValue(v);
  return sortKeys(out);
}

/** A CompressedAttributes (protobufjs toObject) with every index replaced by its word. */
function expand(c: Record<string, Record<string, unknown> | string[] | undefined>, words: readonly string[]): Plain {
  const word = (i: number | string): string => {
    const n = Number(i);
    const w = n >= 0 ? GLOBAL_WORDS[n] : words[-n - 1];
    assert.ok(w !== undefined, `index ${n} has no word (${words.length} message words)`);
    return w;
  };
  const out: Plain = {};
  const put = (key: string, value: Plain) => {
    const name = word(key);
    assert.ok(!Object.hasOwn(out, name), `${name} appears twice`);
    out[name] = value;
  };
  const map = (f: string) => Object.entries((c[f] ?? {}) as Record<string, unknown>);
  for (const [k, v] of map("strings")) put(k, { stringValue: word(v as number) });
  for (const [k, v] of map("int64s")) put(k, { int64Value: String(v) });
  for (const [k, v] of map("doubles")) put(k, { doubleValue: v });
  for (const [k, v] of map("bools")) put(k, { boolValue: v });
  for (const [k, v] of map("timestamps")) put(k, { timestampValue: time(v as TimeObject) });
  for (const [k, v] of map("durations")) put(k, { durationValue: time(v as TimeObject) });
  for (const [k, v] of map("bytes")) put(k, { bytesValue: v });
  for (const [k, v] of map("stringMaps")) {
    const entries: Record<string, string> = {};
    for (const [ek, ev] of Object.entries(((v as { entries?: Record<string, number> }).entries ?? {}) as Record<string, number>)) {
      const key = word(ek);
      assert.ok(!Object.hasOwn(entries, key), `map key ${key} appears twice`);
      entries[key] = word(ev);
    }
    put(k, { stringMapValue: sortKeys(entries) });
  }
  return sortKeys(out);
}

/** Every message word must be used and not be a global word (else it should have had its global index). */
function assertWordsMinimal(words: readonly string[]): void {
  assert.equal(new Set(words).size, words.length, "message words repeat");
  for (const w of words) assert.ok(!GLOBAL_WORDS.includes(w), `${w} is a global word but went to the message words`);
}

// ---------------------------------------------------------------------------
// Generators. Names and string values mix global words (compressed to global
// indexes) with arbitrary Unicode text (message words).

const text = fc.oneof(
  fc.constantFrom(...GLOBAL_WORDS),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.constantFrom("", "JWT-Token", "x-user", "é✓", "a\u0000b", '"quoted"\\'),
);
const name = text.filter((s) => s !== "__proto__");
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const timeValue = fc.record({ seconds: int64, nanos: fc.integer() });

const attributeValue = fc.oneof(
  fc.record({ stringValue: text }),
  fc.record({ int64Value: int64 }),
  fc.record({ doubleValue: fc.double() }),
  fc.record({ boolValue: fc.boolean() }),
  fc.record({ bytesValue: fc.uint8Array({ maxLength: 16 }) }),
  fc.record({ timestampValue: timeValue }),
  fc.record({ durationValue: timeValue }),
  fc.record({ stringMapValue: fc.record({ entries: fc.dictionary(name, text, { maxKeys: 5 }) }) }),
);
const attributes = fc.dictionary(name, attributeValue, { maxKeys: 12 });

function attributesBytes(attrs: Record<string, unknown>): Uint8Array {
  return Attributes.encode(Attributes.fromObject({ attributes: attrs })).finish();
}

const quotaList = fc.array(fc.record({ quota: fc.constantFrom("rq", "burst", "a.b", "é"), charge: fc.bigInt({ min: 0n, max: 2n ** 40n }) }), { maxLength: 5 });

// ---------------------------------------------------------------------------
// Check responses: built as protobufjs objects; `expected` is what
// wire_decode_check_response must answer for them.

const MAX_I64 = 2n ** 63n - 1n;

function durationNanos(d: TimeObject | undefined): string {
  if (d === undefined) return "-1";
  const s = BigInt(d.seconds ?? 0);
  const total = s * 1_000_000_000n + BigInt(d.nanos ?? 0);
  if (s < 0n || total < 0n) return "0";
  return String(total > MAX_I64 ? MAX_I64 : total);
}

interface MatchObject {
  name?: number;
  condition?: number;
  regex?: string;
  mapKey?: number;
}

interface ReferencedObject {
  words?: string[];
  attributeMatches?: MatchObject[];
}

function expectedReferenced(r: ReferencedObject | undefined): Plain {
  const words = r?.words ?? [];
  let valid = true;
  const word = (i: number): string => {
    const w = i >= 0 ? GLOBAL_WORDS[i] : words[-i - 1];
    if (w === undefined) valid = false;
    return w ?? "";
  };
  const matches = (r?.attributeMatches ?? []).map((m) => ({
    name: word(m.name ?? 0),
    condition: m.condition ?? 0,
    // proto3 without presence: protobufjs leaves a zero map_key out, so it reads as absent.
    mapKey: m.mapKey ? word(m.mapKey) : null,
    regex: m.regex ?? "",
  }));
  return { valid, matches };
}

interface StatusObject {
  code?: number;
  message?: string;
}

function expectedStatus(s: StatusObject | undefined): Plain {
  const code = s?.code ?? 0;
  return { statusCode: code, statusName: grpcCodeName(code), statusMessage: s?.message ?? "" };
}

interface OperationObject {
  name?: string;
  value?: string;
  operation?: number;
}

function expectedOps(ops: OperationObject[] | undefined): Plain[] {
  return (ops ?? []).map((o) => ({ name: o.name ?? "", value: o.value ?? "", operation: o.operation ?? 0 }));
}

interface ResponseObject {
  precondition?: {
    status?: StatusObject;
    validDuration?: TimeObject;
    validUseCount?: number;
    referencedAttributes?: ReferencedObject;
    routeDirective?: {
      requestHeaderOperations?: OperationObject[];
      responseHeaderOperations?: OperationObject[];
      directResponseCode?: number;
      directResponseBody?: string;
    };
  };
  quotas?: Record<string, { validDuration?: TimeObject; grantedAmount?: string; referencedAttributes?: ReferencedObject; status?: StatusObject }>;
}

function expected(res: ResponseObject): Plain {
  const p = res.precondition;
  const d = p?.routeDirective;
  return {
    hasPrecondition: p !== undefined,
    precondition: {
      ...expectedStatus(p?.status),
      validDurationNanos: durationNanos(p?.validDuration),
      validUseCount: p?.validUseCount ?? 0,
      referenced: expectedReferenced(p?.referencedAttributes),
      routeDirective:
        d === undefined
          ? null
          : {
              requestHeaderOps: expectedOps(d.requestHeaderOperations),
              responseHeaderOps: expectedOps(d.responseHeaderOperations),
              directResponseCode: d.directResponseCode ?? 0,
              directResponseBody: d.directResponseBody ?? "",
            },
    },
    quotas: Object.entries(res.quotas ?? {}).map(([name, q]) => ({
      name,
      grantedAmount: String(q.grantedAmount ?? "0"),
      validDurationNanos: durationNanos(q.validDuration),
      ...expectedStatus(q.status),
      referenced: expectedReferenced(q.referencedAttributes),
    })),
  };
}

function responseBytes(res: ResponseObject): Uint8Array {
  return CheckResponse.encode(CheckResponse.fromObject(res)).finish();
}

const anyString = fc.string({ unit: "grapheme", maxLength: 10 });
const statusObject = fc.record({ code: fc.integer({ min: -2, max: 20 }), message: anyString }, { requiredKeys: [] });
const durationObject = fc.record(
  {
    seconds: fc.oneof(fc.bigInt({ min: -315_576_000_000n, max: 315_576_000_000n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })).map(String),
    nanos: fc.integer(),
  },
  { requiredKeys: [] },
);
const referencedObject = fc.array(anyString, { maxLength: 4 }).chain((words) =>
  fc.record(
    {
      words: fc.constant(words),
      attributeMatches: fc.array(
        fc.record(
          {
            // Mostly in range, sometimes just outside (global list end, message words end).
            name: fc.integer({ min: -words.length - 1, max: GLOBAL_WORDS.length }),
            condition: fc.integer({ min: 0, max: 4 }),
            regex: anyString,
            mapKey: fc.integer({ min: -words.length - 1, max: GLOBAL_WORDS.length }),
          },
          { requiredKeys: ["name"] },
        ),
        { maxLength: 4 },
      ),
    },
    { requiredKeys: [] },
  ),
);
const operationObject = fc.record({ name: anyString, value: anyString, operation: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: [] });
const responseObject: fc.Arbitrary<ResponseObject> = fc.record(
  {
    precondition: fc.record(
      {
        status: statusObject,
        validDuration: durationObject,
        validUseCount: fc.integer(),
        referencedAttributes: referencedObject,
        routeDirective: fc.record(
          {
            requestHeaderOperations: fc.array(operationObject, { maxLength: 3 }),
            responseHeaderOperations: fc.array(operationObject, { maxLength: 3 }),
            directResponseCode: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
            directResponseBody: anyString,
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ),
    quotas: fc.dictionary(
      fc.string({ maxLength: 6 }).filter((s) => s !== "__proto__"),
      fc.record(
        {
          validDuration: durationObject,
          grantedAmount: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
          referencedAttributes: referencedObject,
          status: statusObject,
        },
        { requiredKeys: [] },
      ),
      { maxKeys: 3 },
    ),
  },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------------------

describe("global words", () => {
  it("assembly/hub/global_words.ts is proto/mesh/hub/v1/global_words.json (node build/gen-global-words.mjs)", () => {
    const json = JSON.parse(readFileSync(join(PROTO_DIR, "mesh", "hub", "v1", "global_words.json"), "utf8")).words as string[];
    const source = readFileSync(join(root, "assembly", "hub", "global_words.ts"), "utf8");
    const list = source.slice(source.indexOf("GLOBAL_WORDS: StaticArray<string> = ["), source.indexOf("];"));
    const words = [...list.matchAll(/^\s+("(?:[^"\\]|\\.)*"),/gm)].map((m) => JSON.parse(m[1]) as string);
    assert.deepEqual(words, json);
    assert.match(source, new RegExp(`GLOBAL_WORD_COUNT: i32 = ${json.length};`));
    assert.deepEqual(json, [...GLOBAL_WORDS]);
  });
});

for (const file of ["filter.debug.wasm", "filter.wasm"]) {
  const wasm = load(file);

  describe(`${file}: check requests`, () => {
    it("compresses hub-client.md §9.2's example: request.headers = 15, authorization = 50, JWT-Token = -1", () => {
      const bytes = encodeCheck(
        wasm,
        attributesBytes({ "request.headers": { stringMapValue: { entries: { authorization: "JWT-Token" } } } }),
        "dedup-1",
        "[]",
        false,
      );
      const req = CheckRequest.toObject(CheckRequest.decode(bytes), { longs: String }) as Record<string, unknown>;
      assert.deepEqual(req, {
        attributes: { words: ["JWT-Token"], stringMaps: { "15": { entries: { "50": -1 } } } },
        globalWordCount: 222,
        deduplicationId: "dedup-1",
      });
    });

    it("gives every global word its (first) global index", () => {
      const attrs: Record<string, unknown> = {};
      for (const w of GLOBAL_WORDS) if (w !== "__proto__") attrs[w] = { boolValue: true };
      const req = CheckRequest.toObject(CheckRequest.decode(encodeCheck(wasm, attributesBytes(attrs), "", "[]", false))) as {
        attributes: { bools: Record<string, boolean>; words?: string[] };
      };
      assert.equal(req.attributes.words, undefined);
      const indexes = Object.keys(req.attributes.bools)
        .map(Number)
        .sort((a, b) => a - b);
      assert.deepEqual(
        indexes,
        [...new Set(GLOBAL_WORDS)].map((w) => GLOBAL_WORDS.indexOf(w)).sort((a, b) => a - b),
      );
    });

    it("round-trips random attribute bags of every value kind, with merged quotas", () => {
      fc.assert(
        fc.property(attributes, fc.string({ maxLength: 20 }), quotaList, fc.boolean(), (attrs, dedupId, quotas, bestEffort) => {
          const input = attributesBytes(attrs);
          const quotasJson = JSON.stringify(quotas.map((q) => ({ quota: q.quota, charge: String(q.charge) })));
          const bytes = encodeCheck(wasm, input, dedupId, quotasJson, bestEffort);
          const req = CheckRequest.toObject(CheckRequest.decode(bytes), { longs: String, bytes: String, arrays: true }) as {
            attributes: Record<string, Record<string, unknown> | string[]> & { words: string[] };
            globalWordCount: number;
            deduplicationId?: string;
            quotas?: Record<string, { amount?: string; bestEffort?: boolean }>;
          };
          assert.deepEqual(expand(req.attributes, req.attributes.words), plainAttributes(input));
          assertWordsMinimal(req.attributes.words);
          assert.equal(req.globalWordCount, 222);
          assert.equal(req.deduplicationId ?? "", dedupId);
          const sums = new Map<string, bigint>();
          for (const q of quotas) sums.set(q.quota, (sums.get(q.quota) ?? 0n) + q.charge);
          const got = Object.entries(req.quotas ?? {}).map(([k, v]) => [k, BigInt(v.amount ?? "0"), v.bestEffort ?? false]);
          assert.deepEqual(
            got,
            [...sums].map(([k, v]) => [k, v, bestEffort]),
          );
        }),
        { numRuns: RUNS },
      );
    });

    it("answers an empty buffer for malformed attributes or quotas", () => {
      assert.equal(encodeCheck(wasm, new Uint8Array([0x0a, 0x05]), "", "[]", false).length, 0);
      for (const bad of ["", "{}", '[{"quota":"q"}]', '[{"quota":1,"charge":1}]', '[{"quota":"q","charge":1.5}]', "[1]"]) {
        assert.equal(encodeCheck(wasm, attributesBytes({}), "", bad, false).length, 0, bad);
      }
      assert.ok(encodeCheck(wasm, attributesBytes({}), "", '[{"quota":"q","charge":"-3"}]', false).length > 0);
    });
  });

  describe(`${file}: report requests`, () => {
    it("round-trips random batches with one shared dictionary and independent encoding", () => {
      fc.assert(
        fc.property(fc.array(attributes, { maxLength: 5 }), (batch) => {
          const inputs = batch.map(attributesBytes);
          const req = ReportRequest.toObject(ReportRequest.decode(encodeReport(wasm, inputs)), { longs: String, bytes: String, arrays: true }) as {
            attributes: Array<Record<string, Record<string, unknown> | string[]> & { words: string[] }>;
            defaultWords: string[];
            globalWordCount: number;
            repeatedAttributesSemantics: number;
          };
          assert.equal(req.repeatedAttributesSemantics, 1);
          assert.equal(req.globalWordCount, 222);
          assert.equal(req.attributes.length, inputs.length);
          assertWordsMinimal(req.defaultWords);
          req.attributes.forEach((entry, i) => {
            assert.deepEqual(entry.words, [], "no per-entry words");
            assert.deepEqual(expand(entry, req.defaultWords), plainAttributes(inputs[i]));
          });
        }),
        { numRuns: RUNS },
      );
    });

    it("sends a word shared by several entries once", () => {
      const one = attributesBytes({ "my.attr": { stringValue: "shared" } });
      const req = ReportRequest.toObject(ReportRequest.decode(encodeReport(wasm, [one, one, one]))) as { defaultWords: string[] };
      assert.deepEqual(req.defaultWords, ["my.attr", "shared"]);
    });

    it("answers an empty buffer for a bad length prefix or a malformed message", () => {
      const ok = attributesBytes({ a: { boolValue: true } });
      assert.equal(callReport(wasm, new Uint8Array([5, 0, 0, 0, 1])).length, 0);
      assert.equal(callReport(wasm, new Uint8Array([1, 0])).length, 0);
      assert.equal(encodeReport(wasm, [ok, new Uint8Array([0x0a, 0x09])]).length, 0);
    });
  });

  describe(`${file}: check responses`, () => {
    it("reads a full response back exactly", () => {
      const res: ResponseObject = {
        precondition: {
          status: { code: 7, message: 'denied "by" rule\n' },
          validDuration: { seconds: 5, nanos: 500 },
          validUseCount: 3,
          referencedAttributes: {
            words: ["x-user", "my.attr"],
            attributeMatches: [
              { name: 15, condition: 2, mapKey: -1 },
              { name: -2, condition: 1 },
              { name: 15, condition: 3, regex: "^x-" },
              { name: 222, condition: 2 },
            ],
          },
          routeDirective: {
            requestHeaderOperations: [
              { name: ":path", value: "/v2" },
              { name: "x-drop", operation: 1 },
            ],
            responseHeaderOperations: [{ name: "x-hub", value: "yes", operation: 2 }],
            directResponseCode: 302,
            directResponseBody: "moved",
          },
        },
        quotas: {
          rq: { grantedAmount: "9007199254740993", validDuration: { seconds: 1 }, status: { code: 8, message: "exhausted" } },
          other: {},
        },
      };
      const got = decodeResponse(wasm, responseBytes(res)) as Plain;
      assert.deepEqual(got, expected(res));
      assert.deepEqual((got.precondition as Plain).referenced, {
        valid: false,
        matches: [
          { name: "request.headers", condition: 2, mapKey: "x-user", regex: "" },
          { name: "my.attr", condition: 1, mapKey: null, regex: "" },
          { name: "request.headers", condition: 3, mapKey: null, regex: "^x-" },
          { name: "", condition: 2, mapKey: null, regex: "" },
        ],
      });
    });

    it("reads an empty response as no precondition", () => {
      assert.deepEqual(decodeResponse(wasm, new Uint8Array(0)), expected({}));
    });

    it("reads random responses back exactly", () => {
      fc.assert(
        fc.property(responseObject, (res) => {
          assert.deepEqual(decodeResponse(wasm, responseBytes(res)), expected(res));
        }),
        { numRuns: RUNS },
      );
    });

    it("answers null, never trapping, for truncated and corrupted responses", () => {
      fc.assert(
        fc.property(responseObject, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (res, cut, at, byte) => {
          const bytes = responseBytes(res);
          const truncated = bytes.subarray(0, bytes.length === 0 ? 0 : cut % bytes.length);
          const got = decodeResponse(wasm, truncated);
          assert.ok(got === null || typeof got === "object");
          if (bytes.length > 0) {
            const corrupted = bytes.slice();
            corrupted[at % bytes.length] = byte;
            const c = decodeResponse(wasm, corrupted);
            assert.ok(c === null || typeof c === "object");
          }
        }),
        { numRuns: RUNS },
      );
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
          const got = decodeResponse(wasm, bytes);
          assert.ok(got === null || typeof got === "object");
        }),
        { numRuns: RUNS * 5 },
      );
    });

    it("answers null for a length that would overflow i32", () => {
      assert.equal(decodeResponse(wasm, new Uint8Array([0x12, 0xff, 0xff, 0xff, 0xff, 0x07])), null);
      assert.equal(decodeResponse(wasm, new Uint8Array([0x12, 0x07, 0x0a, 0xfd, 0xff, 0xff, 0xff, 0x07, 0x00])), null);
    });
  });
}
