// Decoding mesh.hub.v1.CheckResponse (proto/mesh/hub/v1/hub.proto,
// hub-client.md §9.1). Responses are hand-built with ProtoWriter from the
// field numbers of the .proto; malformed rows follow the protobuf encoding
// guide (truncation, wrong wire types, groups, field 0, oversized lengths).
import { ProtoWriter } from "../../assembly/proto/writer";
import { CheckResponse, decodeCheckResponse } from "../../assembly/hub/check_response";
import { Condition, ReferencedAttributes } from "../../assembly/hub/referenced_attributes";
import { HeaderOperationKind } from "../../assembly/hub/route_directive";

function bytes(h: string): Uint8Array {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = <u8>I32.parseInt(h.substr(i * 2, 2), 16);
  return out;
}

function status(code: i32, message: string): ProtoWriter {
  const w = new ProtoWriter();
  if (code != 0) w.int64Field(1, <i64>code);
  if (message.length > 0) w.stringField(2, message);
  return w;
}

function duration(seconds: i64, nanos: i32): ProtoWriter {
  const w = new ProtoWriter();
  if (seconds != 0) w.int64Field(1, seconds);
  if (nanos != 0) w.int64Field(2, <i64>nanos);
  return w;
}

function match(name: i32, condition: i32, regex: string, hasMapKey: bool, mapKey: i32): ProtoWriter {
  const w = new ProtoWriter();
  w.sint32Field(1, name);
  if (condition != 0) w.int64Field(2, <i64>condition);
  if (regex.length > 0) w.stringField(3, regex);
  if (hasMapKey) w.sint32Field(4, mapKey);
  return w;
}

/** ReferencedAttributes with the matches written before the words (field order is free). */
function referenced(words: string[], matches: ProtoWriter[]): ProtoWriter {
  const w = new ProtoWriter();
  for (let i = 0; i < matches.length; i++) w.messageField(2, matches[i]);
  for (let i = 0; i < words.length; i++) w.stringField(1, words[i]);
  return w;
}

function operation(name: string, value: string, op: i32): ProtoWriter {
  const w = new ProtoWriter();
  w.stringField(1, name);
  if (value.length > 0) w.stringField(2, value);
  if (op != 0) w.int64Field(3, <i64>op);
  return w;
}

function response(precondition: ProtoWriter | null, quotas: ProtoWriter[] = []): Uint8Array {
  const w = new ProtoWriter();
  if (precondition !== null) w.messageField(2, precondition);
  for (let i = 0; i < quotas.length; i++) w.messageField(3, quotas[i]);
  return w.finish();
}

function quotaEntry(name: string, result: ProtoWriter | null): ProtoWriter {
  const w = new ProtoWriter();
  w.stringField(1, name);
  if (result !== null) w.messageField(2, result);
  return w;
}

function decode(buf: Uint8Array): CheckResponse {
  const res = decodeCheckResponse(buf);
  expect(res).not.toBeNull();
  return res as CheckResponse;
}

function shape(ref: ReferencedAttributes): string {
  const parts = new Array<string>();
  for (let i = 0; i < ref.matches.length; i++) {
    const m = ref.matches[i];
    const key = m.mapKey;
    parts.push(m.name + (key !== null ? "[" + (key as string) + "]" : "") + ":" + m.condition.toString() + (m.regex.length > 0 ? "~" + m.regex : ""));
  }
  return (ref.valid ? "" : "INVALID ") + parts.join(" ");
}

describe("decodeCheckResponse: precondition", () => {
  it("reads the empty message as no precondition and no quotas", () => {
    const res = decode(new Uint8Array(0));
    expect(res.hasPrecondition).toBe(false);
    expect(res.quotas.length).toBe(0);
    expect(res.precondition.status.code).toBe(0);
  });

  it("reads status, valid duration and valid use count", () => {
    const p = new ProtoWriter();
    p.messageField(1, status(7, "denied by rule"));
    p.messageField(2, duration(5, 500));
    p.int64Field(3, 3);
    const res = decode(response(p));
    expect(res.hasPrecondition).toBe(true);
    expect(res.precondition.status.code).toBe(7);
    expect(res.precondition.status.message).toBe("denied by rule");
    expect(res.precondition.validDurationNanos).toBe(5_000_000_500);
    expect(res.precondition.validUseCount).toBe(3);
    expect(res.precondition.routeDirective).toBeNull();
  });

  it("defaults an empty precondition to OK, no duration (-1), use count 0", () => {
    const res = decode(response(new ProtoWriter()));
    expect(res.hasPrecondition).toBe(true);
    expect(res.precondition.status.code).toBe(0);
    expect(res.precondition.status.message).toBe("");
    expect(res.precondition.validDurationNanos).toBe(-1);
    expect(res.precondition.validUseCount).toBe(0);
    expect(res.precondition.referenced.valid).toBe(true);
    expect(res.precondition.referenced.matches.length).toBe(0);
  });

  it("reads a negative use count (unlimited) and a zero duration", () => {
    const p = new ProtoWriter();
    p.messageField(2, duration(0, 0));
    p.int64Field(3, -1);
    const res = decode(response(p));
    expect(res.precondition.validDurationNanos).toBe(0);
    expect(res.precondition.validUseCount).toBe(-1);
  });

  it("clamps durations to [0, i64.MAX] nanoseconds", () => {
    const rows: i64[] = [-5, 0, -1, 999_999_999, 315_576_000_000, 0, 9_223_372_036, 9_223_372_036, 9_223_372_037, 0];
    const nanos: i32[] = [0, -1, 999_999_999, 2_000_000_000, 0, i32.MAX_VALUE, 0, 999_999_999, 0, 0];
    const want: i64[] = [0, 0, 0, 1_000_000_001_000_000_000, i64.MAX_VALUE, 2_147_483_647, 9_223_372_036_000_000_000, i64.MAX_VALUE, i64.MAX_VALUE, 0];
    for (let i = 0; i < rows.length; i++) {
      const p = new ProtoWriter();
      p.messageField(2, duration(rows[i], nanos[i]));
      expect(decode(response(p)).precondition.validDurationNanos).toBe(want[i], i.toString());
    }
  });

  it("skips unknown and reserved fields", () => {
    const p = new ProtoWriter();
    p.stringField(4, "reserved");
    p.int64Field(9, 1);
    p.doubleField(10, 1.5);
    p.tag(11, 5);
    p.raw(changetype<usize>(bytes("01020304").dataStart), 4);
    p.int64Field(3, 2);
    const w = new ProtoWriter();
    w.stringField(1, "unused field 1");
    w.messageField(2, p);
    w.int64Field(15, 7);
    const res = decode(w.finish());
    expect(res.precondition.validUseCount).toBe(2);
  });

  it("merges a precondition sent twice, later scalars winning", () => {
    const a = new ProtoWriter();
    a.int64Field(3, 1);
    a.messageField(1, status(7, "x"));
    const b = new ProtoWriter();
    b.int64Field(3, 9);
    const w = new ProtoWriter();
    w.messageField(2, a);
    w.messageField(2, b);
    const res = decode(w.finish());
    expect(res.precondition.validUseCount).toBe(9);
    expect(res.precondition.status.code).toBe(7);
  });
});

describe("decodeCheckResponse: referenced attributes", () => {
  it("resolves global words, message words (negative) and map keys, whatever the field order", () => {
    const p = new ProtoWriter();
    p.messageField(
      5,
      referenced(
        ["x-user", "my.attr"],
        [
          match(15, Condition.EXACT, "", true, -1), // request.headers[x-user]
          match(-2, Condition.ABSENCE, "", false, 0), // my.attr
          match(15, Condition.EXACT, "", true, 50), // request.headers[authorization]
          match(15, Condition.REGEX, "^x-", false, 0),
          match(0, Condition.EXACT, "", true, 0), // an explicit map_key 0 is word 0
        ],
      ),
    );
    const ref = decode(response(p)).precondition.referenced;
    expect(shape(ref)).toBe("request.headers[x-user]:2 my.attr:1 request.headers[authorization]:2 request.headers:3~^x- source.ip[source.ip]:2");
  });

  it("reads an absent map_key as null (the whole attribute), not as word 0 as upstream did", () => {
    const p = new ProtoWriter();
    p.messageField(5, referenced([], [match(15, Condition.EXACT, "", false, 0)]));
    const m = decode(response(p)).precondition.referenced.matches[0];
    expect(m.mapKey).toBeNull();
    expect(m.name).toBe("request.headers");
  });

  it("passes unknown condition numbers through", () => {
    const p = new ProtoWriter();
    p.messageField(5, referenced([], [match(1, 7, "", false, 0)]));
    expect(shape(decode(response(p)).precondition.referenced)).toBe("source.port:7");
  });

  it("marks the shape invalid when an index has no word, but still answers", () => {
    const names: i32[] = [222, -3, i32.MAX_VALUE, i32.MIN_VALUE];
    for (let i = 0; i < names.length; i++) {
      const p = new ProtoWriter();
      p.messageField(1, status(7, ""));
      p.messageField(5, referenced(["a", "b"], [match(1, Condition.EXACT, "", false, 0), match(names[i], Condition.EXACT, "", false, 0)]));
      const res = decode(response(p));
      expect(res.precondition.referenced.valid).toBe(false, names[i].toString());
      expect(res.precondition.status.code).toBe(7);
      expect(res.precondition.referenced.matches[0].name).toBe("source.port");
    }
    const q = new ProtoWriter();
    q.messageField(5, referenced(["a"], [match(15, Condition.EXACT, "", true, -2)]));
    expect(decode(response(q)).precondition.referenced.valid).toBe(false);
    const ok = new ProtoWriter();
    ok.messageField(5, referenced(["a", "b"], [match(221, Condition.EXACT, "", true, -2)]));
    expect(decode(response(ok)).precondition.referenced.valid).toBe(true);
  });

  it("does not let one message's words resolve another's indexes", () => {
    const p = new ProtoWriter();
    p.messageField(5, referenced(["only-in-precondition"], []));
    const q = new ProtoWriter();
    q.messageField(5, referenced([], [match(-1, Condition.EXACT, "", false, 0)]));
    const res = decode(response(p, [quotaEntry("rq", q)]));
    expect(res.quotas[0].referenced.valid).toBe(false);
  });
});

describe("decodeCheckResponse: route directive", () => {
  it("reads header operations, the direct response code and body", () => {
    const d = new ProtoWriter();
    d.messageField(1, operation(":path", "/v2", HeaderOperationKind.REPLACE));
    d.messageField(1, operation("x-drop", "", HeaderOperationKind.REMOVE));
    d.messageField(2, operation("x-hub", "yes", HeaderOperationKind.APPEND));
    d.int64Field(3, 302);
    d.stringField(4, "moved");
    const p = new ProtoWriter();
    p.messageField(6, d);
    const rd = decode(response(p)).precondition.routeDirective;
    expect(rd).not.toBeNull();
    const r = rd!;
    expect(r.requestHeaderOps.length).toBe(2);
    expect(r.requestHeaderOps[0].name).toBe(":path");
    expect(r.requestHeaderOps[0].value).toBe("/v2");
    expect(r.requestHeaderOps[0].operation).toBe(0);
    expect(r.requestHeaderOps[1].name).toBe("x-drop");
    expect(r.requestHeaderOps[1].operation).toBe(1);
    expect(r.responseHeaderOps.length).toBe(1);
    expect(r.responseHeaderOps[0].value).toBe("yes");
    expect(r.responseHeaderOps[0].operation).toBe(2);
    expect(r.directResponseCode).toBe(302);
    expect(r.directResponseBody).toBe("moved");
  });

  it("reads an empty directive as present with nothing to do", () => {
    const p = new ProtoWriter();
    p.messageField(6, new ProtoWriter());
    const rd = decode(response(p)).precondition.routeDirective;
    expect(rd).not.toBeNull();
    expect(rd!.directResponseCode).toBe(0);
    expect(rd!.requestHeaderOps.length).toBe(0);
  });
});

describe("decodeCheckResponse: quotas", () => {
  it("reads one result per quota with its amount, duration, status and referenced attributes", () => {
    const a = new ProtoWriter();
    a.messageField(1, duration(2, 0));
    a.int64Field(2, 5);
    a.messageField(6, status(8, "exhausted"));
    a.messageField(5, referenced(["k"], [match(-1, Condition.EXACT, "", false, 0)]));
    const res = decode(response(null, [quotaEntry("rq", a), quotaEntry("empty", new ProtoWriter())]));
    expect(res.hasPrecondition).toBe(false);
    expect(res.quotas.length).toBe(2);
    const q = res.quotas[0];
    expect(q.name).toBe("rq");
    expect(q.grantedAmount).toBe(5);
    expect(q.validDurationNanos).toBe(2_000_000_000);
    expect(q.status.code).toBe(8);
    expect(q.status.message).toBe("exhausted");
    expect(shape(q.referenced)).toBe("k:2");
    const e = res.quotas[1];
    expect(e.name).toBe("empty");
    expect(e.grantedAmount).toBe(0);
    expect(e.validDurationNanos).toBe(-1);
    expect(e.status.code).toBe(0);
  });

  it("reads an entry without a value as the default result, and keeps the later of two equal keys", () => {
    const later = new ProtoWriter();
    later.int64Field(2, 9);
    const first = new ProtoWriter();
    first.int64Field(2, 1);
    const res = decode(response(null, [quotaEntry("a", first), quotaEntry("b", null), quotaEntry("a", later)]));
    expect(res.quotas.length).toBe(2);
    expect(res.quotas[0].name).toBe("a");
    expect(res.quotas[0].grantedAmount).toBe(9);
    expect(res.quotas[1].name).toBe("b");
    expect(res.quotas[1].grantedAmount).toBe(0);
  });

  it("reads int64 amounts above 2^53 exactly", () => {
    const a = new ProtoWriter();
    a.int64Field(2, 9007199254740993);
    expect(decode(response(null, [quotaEntry("big", a)])).quotas[0].grantedAmount).toBe(9007199254740993);
  });
});

function full(): Uint8Array {
  const p = new ProtoWriter();
  p.messageField(1, status(7, "no"));
  p.messageField(2, duration(1, 2));
  p.int64Field(3, 4);
  p.messageField(5, referenced(["w"], [match(-1, Condition.EXACT, "^r", true, 15)]));
  const d = new ProtoWriter();
  d.messageField(1, operation("x", "y", 2));
  d.int64Field(3, 200);
  p.messageField(6, d);
  const q = new ProtoWriter();
  q.int64Field(2, 3);
  q.messageField(6, status(14, "busy"));
  return response(p, [quotaEntry("rq", q)]);
}

describe("decodeCheckResponse: malformed input", () => {
  it("answers null for every truncation inside a field, never trapping", () => {
    const buf = full();
    // The two top-level fields end at these offsets; any other cut is inside a field.
    const preconditionEnd = 2 + <i32>buf[1];
    let nulls = 0;
    for (let n = 0; n < buf.length; n++) {
      const res = decodeCheckResponse(buf.subarray(0, n));
      if (n == 0 || n == preconditionEnd) expect(res).not.toBeNull(n.toString());
      else {
        expect(res).toBeNull(n.toString());
        nulls++;
      }
    }
    expect(nulls).toBe(buf.length - 2);
    expect(decodeCheckResponse(buf)).not.toBeNull();
  });

  it("answers null for wrong wire types of known fields", () => {
    const rows: string[] = [
      "1001", // precondition (2) as varint
      "1a00" + "08", // quotas (3) as LEN, then a dangling key
      "1202" + "1a00", // valid_use_count (3) as LEN
      "1209" + "09" + "0100000000000000", // status (1) as fixed64
      "1203" + "2a01" + "08", // referenced words (1) as varint
      "1204" + "2a02" + "0a00", // words ok, ...
      "1204" + "2a02" + "1001", // attribute_matches (2) as varint
      "1206" + "2a04" + "1202" + "0a00", // match name (1) as LEN
      "1204" + "3202" + "0a01", // route directive op truncated
      "1204" + "3202" + "0801", // request_header_operations (1) as varint
      "1a04" + "0a05" + "6162", // quota name longer than its entry
      "1a05" + "0a01" + "61" + "1001", // quota value (2) as varint
      "1a06" + "0a01" + "61" + "1201" + "08", // quota valid_duration (1) as varint
    ];
    for (let i = 0; i < rows.length; i++) {
      if (rows[i] == "1204" + "2a02" + "0a00") continue; // a valid row, kept as the control
      expect(decodeCheckResponse(bytes(rows[i]))).toBeNull(rows[i]);
    }
    expect(decodeCheckResponse(bytes("1204" + "2a02" + "0a00"))).not.toBeNull();
  });

  it("answers null for groups, field 0 and over-long varints", () => {
    const rows: string[] = [
      "1b", // field 3, start group
      "0c", // field 1, end group
      "0e", // wire type 6
      "0001", // field 0
      "0801" + "0f", // wire type 7 after a skipped field
      "78" + "ffffffffffffffffffff01", // unknown field 15, 11-byte varint
      "78" + "ff", // truncated varint
      "1203" + "0b0c00", // a group inside the precondition
    ];
    for (let i = 0; i < rows.length; i++) expect(decodeCheckResponse(bytes(rows[i]))).toBeNull(rows[i]);
  });

  it("answers null for lengths past the end, including ones that overflow i32", () => {
    const rows: string[] = [
      "12" + "ffffffff07", // 2^31 - 1
      "12" + "ffffffff0f", // 2^32 - 1
      "12" + "ffffffffffffffff7f", // 2^63 - 1
      "0a" + "feffffff07" + "00", // unknown field 1 with a huge length
      "1207" + "0a" + "fdffffff07" + "00", // status inside, huge length
      "1209" + "2a" + "07" + "0a" + "ffffffff07" + "00", // a word with a huge length
      "12" + "05" + "00", // precondition longer than the message
    ];
    for (let i = 0; i < rows.length; i++) expect(decodeCheckResponse(bytes(rows[i]))).toBeNull(rows[i]);
  });

  it("accepts invalid UTF-8 in strings without trapping", () => {
    const res = decode(bytes("1a05" + "0a03" + "ff80c3"));
    expect(res.quotas.length).toBe(1);
  });
});
