// The hub's one-pass CheckRequest reader (host/wire/check_request_reader.ts)
// answers exactly what the Check handler's general path (the UTF-8 walk,
// protobufjs, decodeAttributes) answers, or leaves the request to it:
// - for any bytes — random attribute layouts, quotas given again or without
//   a name or parameters, 64-bit amounts, long varints, unknown words,
//   invalid UTF-8, unknown fields, flipped bytes, truncations — the handler's
//   decoding equals the general path's: the same attribute map in the same
//   order, the same global word count, deduplication id and quotas, the same
//   errors (INVALID_ARGUMENT and its message), and the same CheckResponse;
// - well-formed requests with known words are read by it, not left over.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import protobuf from "protobufjs";
import { check, type CheckRequestMessage, decodeOrReject } from "../../host/hubs/check.ts";
import { decodeCheckGeneral, encodeMessage } from "../../host/hubs/hub_messages.ts";
import { emptyHubConfig } from "../../host/hubs/hub_config.ts";
import { MemQuotaStore } from "../../host/hubs/quota_store.ts";
import { readPlainCheck, type PlainCheck } from "../../host/wire/check_request_reader.ts";
import type { AttributeMap } from "../../host/wire/compressed.ts";
import { anyWord, DICTIONARY, damage, damaged, type EntryLayout, entryLayout, int64, text, writeEntry } from "./support/attribute_layouts.ts";

const RUNS = Number(process.env.READER_RUNS ?? 400);

// ---------------------------------------------------------------------------
// CheckRequests as wire layouts: fields in any order, given again or left out.

interface QuotaLayout {
  name?: Uint8Array;
  params?: { amount?: bigint; bestEffort?: number; again: boolean };
  again: boolean;
}

type Field =
  | { kind: "attributes"; entry: EntryLayout }
  | { kind: "globalWordCount"; count: number }
  | { kind: "deduplicationId"; id: Uint8Array }
  | { kind: "quota"; quota: QuotaLayout };

function writeParams(w: protobuf.Writer, p: NonNullable<QuotaLayout["params"]>): void {
  w.uint32((2 << 3) | 2).fork();
  for (let i = 0; i < (p.again ? 2 : 1); i++) {
    if (p.amount !== undefined) w.uint32((1 << 3) | 0).int64(int64(p.amount));
    if (p.bestEffort !== undefined) w.uint32((2 << 3) | 0).uint64(p.bestEffort);
  }
  w.ldelim();
}

function encode(fields: Field[]): Buffer {
  const w = protobuf.Writer.create();
  for (const f of fields) {
    switch (f.kind) {
      case "attributes":
        w.uint32((1 << 3) | 2).fork();
        writeEntry(w, f.entry);
        w.ldelim();
        break;
      case "globalWordCount":
        w.uint32((2 << 3) | 0).uint32(f.count);
        break;
      case "deduplicationId":
        w.uint32((3 << 3) | 2).bytes(f.id);
        break;
      case "quota": {
        const q = f.quota;
        w.uint32((4 << 3) | 2).fork();
        for (let i = 0; i < (q.again ? 2 : 1); i++) {
          if (q.name !== undefined) w.uint32((1 << 3) | 2).bytes(q.name);
          if (q.params !== undefined) writeParams(w, q.params);
        }
        w.ldelim();
      }
    }
  }
  return Buffer.from(w.finish());
}

const quotaName = fc.oneof(fc.constantFrom("requestcount", "a", "", "12", "__proto__", "constructor").map(text), fc.string().map(text));

function quotaLayout(wild: boolean): fc.Arbitrary<QuotaLayout> {
  const amount = fc.oneof(fc.bigInt({ min: -5n, max: 100n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(2n ** 53n + 1n));
  return fc.record({
    name: fc.option(wild ? fc.oneof(quotaName, anyWord) : quotaName, { nil: undefined, freq: 8 }),
    params: fc.option(
      fc.record({
        amount: fc.option(amount, { nil: undefined, freq: 8 }),
        bestEffort: fc.option(fc.constantFrom(0, 1, 2 ** 32, 2 ** 40), { nil: undefined, freq: 4 }),
        again: wild ? fc.boolean() : fc.constant(false),
      }),
      { nil: undefined, freq: 8 },
    ),
    again: wild ? fc.boolean() : fc.constant(false),
  });
}

function checkLayout(wild: boolean): fc.Arbitrary<Field[]> {
  const field: fc.Arbitrary<Field> = fc.oneof(
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(DICTIONARY.size, 111, 0, wild ? DICTIONARY.size + 1 : 1, wild ? 2 ** 32 - 1 : 2)
        .map((count) => ({ kind: "globalWordCount" as const, count })),
    },
    { weight: 1, arbitrary: (wild ? anyWord : fc.string().map(text)).map((id) => ({ kind: "deduplicationId" as const, id })) },
    { weight: 2, arbitrary: quotaLayout(wild).map((quota) => ({ kind: "quota" as const, quota })) },
  );
  const attributes = entryLayout(0, wild).map((entry) => ({ kind: "attributes" as const, entry }));
  // The attributes once at most in a well-formed request, anywhere among the other fields; a wild one may give them again.
  return fc
    .record({ others: fc.array(field, { maxLength: 6 }), attributes: fc.array(attributes, { maxLength: wild ? 2 : 1 }), at: fc.nat() })
    .map(({ others, attributes, at }) => {
      const fields = [...others];
      for (const a of attributes) fields.splice(at % (fields.length + 1), 0, a);
      return fields;
    });
}

// ---------------------------------------------------------------------------

/** 64-bit amounts as check.ts reads them (protobufjs gives Longs, the reader numbers). */
function amountOf(v: unknown): number {
  const n = typeof v === "number" ? v : Number(String(v ?? 0));
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, n));
}

const entriesOf = (m: AttributeMap) =>
  [...m].map(([name, v]) => ("stringMapValue" in v ? [name, { stringMap: Object.entries(v.stringMapValue.entries) }] : [name, v]));

/** What the Check handler makes of a request: its decoded fields where order counts, then check()'s answer; or the error. */
function outcome(decode: () => CheckRequestMessage | PlainCheck): unknown {
  try {
    const request = decode();
    const attributes = request.attributes instanceof Map ? request.attributes : decodeOrReject(request.attributes, DICTIONARY);
    const quotas = request.quotas ?? {};
    const answer = check({ config: emptyHubConfig("mesh-system"), quotas: new MemQuotaStore(() => 0), dictionary: DICTIONARY }, request);
    assert.ok(!(answer instanceof Promise));
    return {
      attributes: entriesOf(attributes),
      globalWordCount: request.globalWordCount ?? 0,
      deduplicationId: request.deduplicationId ?? undefined,
      quotas: Object.keys(quotas)
        .sort()
        .map((name) => [name, amountOf(quotas[name].amount), quotas[name].bestEffort === true]),
      response: encodeMessage("mesh.hub.v1.CheckResponse", answer).toString("base64"),
    };
  } catch (e) {
    const err = e as Error & { code?: unknown };
    return { error: err.name, code: err.code, message: err.message };
  }
}

/** The handler's decoding (one pass, else the general path) against the general path alone. */
function sameAsGeneral(bytes: Buffer): void {
  assert.deepStrictEqual(
    outcome(() => readPlainCheck(bytes, DICTIONARY) ?? decodeCheckGeneral(bytes)),
    outcome(() => decodeCheckGeneral(bytes)),
  );
}

describe("hub CheckRequest reader", () => {
  it("answers what the general path answers for well-formed requests with known words, and reads them itself", () => {
    fc.assert(
      fc.property(checkLayout(false), (fields) => {
        const bytes = encode(fields);
        sameAsGeneral(bytes);
        const named = fields.some((f) => f.kind === "quota" && Buffer.from(f.quota.name ?? []).toString() === "__proto__");
        if (!named) assert.notEqual(readPlainCheck(bytes, DICTIONARY), undefined, "a well-formed request is read in one pass");
      }),
      { numRuns: RUNS },
    );
  });

  it("answers what the general path answers with repeated fields, unknown words, invalid UTF-8 and out-of-range numbers", () => {
    fc.assert(
      fc.property(checkLayout(true), (fields) => sameAsGeneral(encode(fields))),
      { numRuns: RUNS },
    );
  });

  it("answers what the general path answers for damaged bytes", () => {
    fc.assert(
      fc.property(checkLayout(false), damage, (fields, d) => sameAsGeneral(damaged(encode(fields), d))),
      { numRuns: RUNS },
    );
  });

  it("refuses invalid UTF-8 and unknown words through the general path, naming the field", () => {
    const bad = encode([{ kind: "deduplicationId", id: Uint8Array.of(0x61, 0xc3) }]);
    assert.equal(readPlainCheck(bad, DICTIONARY), undefined);
    assert.throws(() => decodeCheckGeneral(bad), { code: 3, message: "malformed CheckRequest: deduplicationId is not valid UTF-8" });
    const unknown = encode([
      {
        kind: "attributes",
        entry: { words: [], wordsFirst: false, maps: [{ member: 2, key: DICTIONARY.size, value: { member: 2, index: 0 }, valueFirst: false }] },
      },
    ]);
    assert.equal(readPlainCheck(unknown, DICTIONARY), undefined);
    assert.deepEqual(
      outcome(() => decodeCheckGeneral(unknown)),
      {
        error: "RpcError",
        code: 3,
        message: `Request could not be processed due to invalid attributes: strings: attribute name ${DICTIONARY.size} is not a global word (the hub knows ${DICTIONARY.size}: 0..${DICTIONARY.size - 1})`,
      },
    );
  });
});
