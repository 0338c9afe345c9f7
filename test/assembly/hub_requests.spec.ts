// Hub request encoding: CompressedAttributes, CheckRequest and ReportRequest
// (proto/mesh/hub/v1/{attributes,hub}.proto, hub-client.md §9). The bytes are
// read back with ProtoReader into a compact text per field, so a vector
// names field numbers and indexes rather than hex; one hex vector is
// hand-encoded from the proto for the example of hub-client.md §9.2.
import { ProtoReader } from "../../assembly/proto/reader";
import { ProtoWriter, WIRE_FIXED64, WIRE_LEN } from "../../assembly/proto/writer";
import { AttributeBag } from "../../assembly/attributes/bag";
import { AttributeValue, ValueKind, StringMap } from "../../assembly/attributes/value";
import { HeaderMap } from "../../assembly/attributes/header_map";
import { encodePairs } from "../../assembly/pairs";
import { QuotaCharge } from "../../assembly/quota";
import { MessageDictionary, globalWordIndex } from "../../assembly/hub/dictionary";
import { CompressedAttributesWriter } from "../../assembly/hub/compressed_attributes";
import { CheckRequestEncoder, encodeCheckRequest } from "../../assembly/hub/check_request";
import { encodeReportRequest, ReportRequestEncoder } from "../../assembly/hub/report_request";
import { GLOBAL_WORD_COUNT } from "../../assembly/hub/global_words";
import { RequestValues } from "../../assembly/attributes/request_values";
import { asciiHex, bytesOf, compress, headers, headersOf, hex, renderAttributes, renderCheck, renderReport } from "./hub_render";

const NO_QUOTAS = new Array<QuotaCharge>();

describe("CompressedAttributes", () => {
  it("encodes hub-client.md §9.2's example: request.headers = 15, authorization = 50, JWT-Token = -1 (hand-encoded)", () => {
    const bag = new AttributeBag();
    bag.set("request.headers", AttributeValue.ofMap(headers("authorization", "JWT-Token")));
    const w = new ProtoWriter();
    new CompressedAttributesWriter().write(w, bag, new MessageDictionary(), true);
    // string_maps (9) {key 15 -> zigzag 30, value CompressedStringMap {entries (1) {50 -> 100, -1 -> 1}}}, words (1) "JWT-Token"
    expect(hex(w.finish())).toBe("4a0a" + "081e" + "1206" + "0a04" + "0864" + "1001" + "0a09" + asciiHex("JWT-Token"));
  });

  it("writes every value kind into its own map", () => {
    const bag = new AttributeBag();
    bag.setString("request.path", "/api");
    bag.set("response.code", AttributeValue.ofInt64(-9007199254740993));
    bag.set("sample.ratio", AttributeValue.ofDouble(0.25));
    bag.set("connection.mtls", AttributeValue.ofBool(true));
    bag.set("flag.off", AttributeValue.ofBool(false));
    bag.set("request.time", AttributeValue.ofSecondsNanos(ValueKind.Timestamp, 1700000000, 5));
    bag.set("response.duration", AttributeValue.ofSecondsNanos(ValueKind.Duration, -1, -500000000));
    bag.set("source.ip", AttributeValue.ofBytes(Uint8Array.wrap(String.UTF8.encode("\x0a\x00\x00\x01"))));
    bag.set("request.headers", AttributeValue.ofMap(headers(":method", "GET")));
    const path = globalWordIndex("request.path").toString();
    const code = globalWordIndex("response.code").toString();
    const mtls = globalWordIndex("connection.mtls").toString();
    const time = globalWordIndex("request.time").toString();
    const duration = globalWordIndex("response.duration").toString();
    const method = globalWordIndex(":method").toString();
    const get = globalWordIndex("GET");
    // "/api", "sample.ratio", "flag.off" are not global words.
    expect(
      compress(bag),
    ).toBe(
      "s[" + path + "]=-1 i[" + code + "]=-9007199254740993 d[-2]=0.25 b[" + mtls + "]=true b[-3]=false" +
        " t[" + time + "]=1700000000/5 u[" + duration + "]=-1/-500000000 y[0]=0a000001" +
        " m[15]={" + method + ":" + (get >= 0 ? get.toString() : "-4") + "}" +
        " w:/api w:sample.ratio w:flag.off" + (get >= 0 ? "" : " w:GET"),
    );
  });

  it("writes zero values and empty messages explicitly in map entries", () => {
    const bag = new AttributeBag();
    bag.set("a", AttributeValue.ofInt64(0));
    bag.set("b", AttributeValue.ofSecondsNanos(ValueKind.Timestamp, 0, 0));
    bag.set("c", AttributeValue.ofBytes(new Uint8Array(0)));
    bag.set("d", AttributeValue.ofMap(new StringMap()));
    const noBytes = new AttributeValue();
    noBytes.kind = ValueKind.Bytes;
    bag.set("e", noBytes);
    expect(compress(bag)).toBe("i[-1]=0 t[-2]=0/0 y[-3]= m[-4]={} y[-5]= w:a w:b w:c w:d w:e");
  });

  it("numbers message words in first-use order across names, values, map keys and map values", () => {
    const bag = new AttributeBag();
    bag.set("request.headers", AttributeValue.ofMap(headers("authorization", "JWT-Token")));
    bag.setString("request.path", "JWT-Token");
    bag.setString("my.attr", "x");
    const path = globalWordIndex("request.path").toString();
    expect(compress(bag)).toBe("m[15]={50:-1} s[" + path + "]=-1 s[-2]=-3 w:JWT-Token w:my.attr w:x");
  });

  it("keeps global words beyond the peer's count out of the global range", () => {
    const bag = new AttributeBag();
    bag.setString("source.ip", "request.headers");
    expect(compress(bag, 10)).toBe("s[0]=-1 w:request.headers");
    expect(compress(bag, 16)).toBe("s[0]=15");
  });

  it("leaves the words to the caller when asked (report entries)", () => {
    const bag = new AttributeBag();
    bag.setString("my.attr", "x");
    const w = new ProtoWriter();
    const d = new MessageDictionary();
    new CompressedAttributesWriter().write(w, bag, d, false);
    expect(renderAttributes(new ProtoReader(w.finish()))).toBe("s[-1]=-2");
    expect(d.words.join(",")).toBe("my.attr,x");
  });

  it("encodes headers read in place (names, values and a header-valued attribute) exactly as the same strings", () => {
    const keys = [":authority", "user-agent", "x-custom", "x-custom-2", "accept", "x-utf8"];
    const values = ["pets.example:8080", "autocannon", "JWT-Token", "pets.example:8080", "*/*", "naïve ✓"];
    const pairs = encodePairs(keys, values);
    const inPlace = new HeaderMap();
    expect(inPlace.fill(pairs.dataStart, <usize>pairs.length)).toBe(true);
    const viewed = new AttributeValue();
    viewed.setView(inPlace.valuePtr(1), inPlace.valueLength(1));
    const strings = new StringMap();
    for (let i = 0; i < keys.length; i++) strings.set(keys[i], values[i]);
    const a = new AttributeBag();
    a.set("request.headers", AttributeValue.ofMap(inPlace));
    a.set("request.useragent", viewed);
    a.setString("my.attr", "JWT-Token");
    const b = new AttributeBag();
    b.set("request.headers", AttributeValue.ofMap(strings));
    b.setString("request.useragent", "autocannon");
    b.setString("my.attr", "JWT-Token");
    expect(inPlace.isViewing).toBe(true);
    expect(compress(a)).toBe(compress(b));
    expect(compress(a, 0)).toBe(compress(b, 0));
    // Nothing was decoded into the map: it still reads its bytes.
    expect(inPlace.keyStringAt(2)).toBeNull();
  });

  it("writes nothing for an empty bag", () => {
    expect(compress(new AttributeBag())).toBe("");
  });
});

describe("CheckRequest", () => {
  it("carries the attributes with their own words, the global word count and the deduplication id", () => {
    const bag = new AttributeBag();
    bag.setString("request.path", "/pets");
    const path = globalWordIndex("request.path").toString();
    expect(renderCheck(encodeCheckRequest(bag, GLOBAL_WORD_COUNT, "uuid-7", NO_QUOTAS, false))).toBe(
      "attributes(s[" + path + "]=-1 w:/pets) gwc=222 id=uuid-7",
    );
  });

  it("always writes the attributes field, and leaves out an empty id", () => {
    expect(hex(encodeCheckRequest(new AttributeBag(), GLOBAL_WORD_COUNT, "", NO_QUOTAS, false))).toBe("0a00" + "10de01");
  });

  it("clamps the global word count to the words the filter has", () => {
    const bag = new AttributeBag();
    expect(renderCheck(encodeCheckRequest(bag, 5000, "", NO_QUOTAS, false))).toBe("attributes() gwc=222");
    expect(renderCheck(encodeCheckRequest(bag, 100, "", NO_QUOTAS, false))).toBe("attributes() gwc=100");
    expect(renderCheck(encodeCheckRequest(bag, 0, "", NO_QUOTAS, false))).toBe("attributes()");
  });

  it("merges quotas charged twice into one map entry, summing the amounts, in first-charge order", () => {
    const quotas = [new QuotaCharge("rq", 1), new QuotaCharge("other", 2), new QuotaCharge("rq", 3), new QuotaCharge("zero", 0)];
    expect(renderCheck(encodeCheckRequest(new AttributeBag(), 222, "d", quotas, false))).toBe(
      "attributes() gwc=222 id=d q[rq]=4 q[other]=2 q[zero]=0",
    );
  });

  it("marks every quota best-effort when asked", () => {
    const quotas = [new QuotaCharge("rq", 1), new QuotaCharge("b", 5)];
    expect(renderCheck(encodeCheckRequest(new AttributeBag(), 222, "", quotas, true))).toBe(
      "attributes() gwc=222 q[rq]=1/best-effort q[b]=5/best-effort",
    );
  });

  it("starts each request of a reused encoder with an empty dictionary and no quotas", () => {
    const encoder = new CheckRequestEncoder();
    const a = new AttributeBag();
    a.setString("my.a", "v");
    const b = new AttributeBag();
    b.setString("my.b", "v");
    expect(renderCheck(encoder.encode(a, 222, "1", [new QuotaCharge("q", 1)], false))).toBe("attributes(s[-1]=-2 w:my.a w:v) gwc=222 id=1 q[q]=1");
    expect(renderCheck(encoder.encode(b, 222, "2", NO_QUOTAS, false))).toBe("attributes(s[-1]=-2 w:my.b w:v) gwc=222 id=2");
  });

  it("returns bytes that later encodes do not overwrite", () => {
    const encoder = new CheckRequestEncoder();
    const a = new AttributeBag();
    a.setString("my.a", "v");
    const first = encoder.encode(a, 222, "1", NO_QUOTAS, false);
    const before = hex(first);
    encoder.encode(new AttributeBag(), 222, "2", NO_QUOTAS, false);
    expect(hex(first)).toBe(before);
  });
});

describe("ReportRequest", () => {
  it("shares one dictionary in default_words, with independent encoding and no per-entry words", () => {
    const a = new AttributeBag();
    a.setString("request.path", "/shared");
    a.setString("my.attr", "x");
    const b = new AttributeBag();
    b.setString("request.path", "/shared");
    b.set("response.code", AttributeValue.ofInt64(200));
    const path = globalWordIndex("request.path").toString();
    const code = globalWordIndex("response.code").toString();
    expect(renderReport(encodeReportRequest([a, b], GLOBAL_WORD_COUNT))).toBe(
      "entry(s[" + path + "]=-1 s[-2]=-3) entry(s[" + path + "]=-1 i[" + code + "]=200)" +
        " dw:/shared dw:my.attr dw:x gwc=222 semantics=1",
    );
  });

  it("gives the same bytes when a request's reused values and header map repeat, change, change kind or go missing from entry to entry", () => {
    // What a proxy does: one bag, one RequestValues and one header map, refilled per request.
    const values = new RequestValues();
    const map = new HeaderMap();
    const bag = new AttributeBag();
    const shared = AttributeValue.ofString("kubernetes://petstore-v1.demo");
    // Literal bytes make each entry longer than a one-byte length.
    const address = AttributeValue.ofBytes(bytesOf(150));
    // A changed value is kept over the previous one when it fits, elsewhere when it does not.
    const paths = ["/pets/1", "/pets/1", "/pets/2", "/pets/123456", "/pets/1", "/pets/1"];
    const agents = ["curl", "curl", "wget", "curl", "curl", "curl"];
    const codes: i64[] = [200, 200, 404, 200, 200, 200];
    const encoder = new ReportRequestEncoder();
    encoder.begin(GLOBAL_WORD_COUNT);
    const reference = new Array<AttributeBag>();
    for (let i = 0; i < paths.length; i++) {
      values.reset();
      const pairs = encodePairs([":path", "user-agent"], [paths[i], agents[i]]);
      expect(map.fill(pairs.dataStart, <usize>pairs.length)).toBe(true);
      bag.clear();
      bag.set("destination.uid", shared);
      bag.set("destination.ip", address);
      bag.set("request.headers", values.map(map));
      bag.set("request.path", values.view(map.valuePtr(0), map.valueLength(0)));
      bag.set("response.code", values.int64(codes[i]));
      bag.set("response.time", values.timestampNanos(1_700_000_000_000_000_000 + <i64>i * 1000));
      // Entry 3 has no user agent; entry 4 has it as a number.
      if (i != 3) bag.set("request.useragent", i == 4 ? values.int64(7) : values.view(map.valuePtr(1), map.valueLength(1)));
      expect(encoder.append(bag, i32.MAX_VALUE)).toBe(true);
      // The same attributes as fresh values, none reused.
      const fresh = new AttributeBag();
      fresh.setString("destination.uid", "kubernetes://petstore-v1.demo");
      fresh.set("destination.ip", AttributeValue.ofBytes(bytesOf(150)));
      fresh.set("request.headers", AttributeValue.ofMap(headersOf(paths[i], agents[i])));
      fresh.setString("request.path", paths[i]);
      fresh.set("response.code", AttributeValue.ofInt64(codes[i]));
      fresh.set("response.time", AttributeValue.ofTimestampNanos(1_700_000_000_000_000_000 + <i64>i * 1000));
      if (i != 3) fresh.set("request.useragent", i == 4 ? AttributeValue.ofInt64(7) : AttributeValue.ofString(agents[i]));
      reference.push(fresh);
    }
    expect(hex(encoder.finish())).toBe(hex(encodeReportRequest(reference, GLOBAL_WORD_COUNT)));
  });

  it("gives the same bytes when header maps are filled again from the same, equal or other blocks, or changed between", () => {
    // Two streams' maps taking turns, each filled per request: a map filled
    // again from the same block keeps its reading (the memo compares that),
    // another map or a changed one reads the block anew (the memo compares bytes).
    const first = new HeaderMap();
    const second = new HeaderMap();
    const paths = ["/a/1", "/a/1", "/a/1", "/a/2", "/a/2", "/a/1", "/a/1", "/a/1", "/a/3"];
    const useSecond = [false, false, true, false, true, true, false, false, false];
    // Before entry 7, the first map is changed (a header removed): its block is read again.
    const values = new RequestValues();
    const bag = new AttributeBag();
    const encoder = new ReportRequestEncoder();
    encoder.begin(GLOBAL_WORD_COUNT);
    const reference = new Array<AttributeBag>();
    for (let i = 0; i < paths.length; i++) {
      const map = useSecond[i] ? second : first;
      if (i == 7) first.remove("user-agent");
      const pairs = encodePairs([":path", "user-agent"], [paths[i], "curl"]);
      expect(map.fill(pairs.dataStart, <usize>pairs.length)).toBe(true);
      values.reset();
      bag.clear();
      bag.set("request.headers", values.map(map));
      bag.set("response.time", values.timestampNanos(1_700_000_000_000_000_000 + <i64>i));
      expect(encoder.append(bag, i32.MAX_VALUE)).toBe(true);
      const fresh = new AttributeBag();
      fresh.set("request.headers", AttributeValue.ofMap(headersOf(paths[i], "curl")));
      fresh.set("response.time", AttributeValue.ofTimestampNanos(1_700_000_000_000_000_000 + <i64>i));
      reference.push(fresh);
    }
    expect(hex(encoder.finish())).toBe(hex(encodeReportRequest(reference, GLOBAL_WORD_COUNT)));
  });

  it("copies repeated values right after entries shorter than 128 bytes and longer than 16 KiB", () => {
    // An entry's length takes one byte, two, or three: its contents (and what
    // the memo remembers of them) move down by one, stay, or move up by one.
    const sizes: i32[] = [4, 4, 300, 300, 20000, 20000, 4, 4];
    const encoder = new ReportRequestEncoder();
    encoder.begin(GLOBAL_WORD_COUNT);
    const values = new RequestValues();
    const bag = new AttributeBag();
    const rendered = new Array<string>();
    for (let i = 0; i < sizes.length; i++) {
      values.reset();
      bag.clear();
      bag.setString("my.attr", "x");
      bag.set("destination.ip", AttributeValue.ofBytes(bytesOf(sizes[i])));
      bag.set("response.code", values.int64(i < 4 ? 200 : 404));
      expect(encoder.append(bag, i32.MAX_VALUE)).toBe(true);
      const alone = new ReportRequestEncoder();
      alone.begin(GLOBAL_WORD_COUNT);
      alone.append(bag, i32.MAX_VALUE);
      rendered.push(renderReport(alone.finish()).split(" dw:")[0]);
    }
    // Each entry reads as it does alone in a message (the words, all in the
    // same first-use order, get the same indexes).
    const entries = renderReport(encoder.finish()).split(" dw:")[0];
    expect(entries).toBe(rendered.join(" "));
  });

  it("gives the same bytes when shared values of other objects carry the same, or other, numbers and bytes", () => {
    // The connections of one peer: each its own shared address values, the ip the same, the port not.
    const other = bytesOf(4);
    other[3] = 9;
    const ips = [bytesOf(4), bytesOf(4), other, bytesOf(5), bytesOf(4), new Uint8Array(0)];
    const ports: i64[] = [41000, 41001, 41001, 41002, 41002, 41003];
    const encoder = new ReportRequestEncoder();
    encoder.begin(GLOBAL_WORD_COUNT);
    const reference = new Array<AttributeBag>();
    for (let i = 0; i < ips.length; i++) {
      const bag = new AttributeBag();
      bag.set("source.ip", AttributeValue.ofBytes(ips[i]));
      bag.set("source.port", AttributeValue.ofInt64(ports[i]));
      // The same value object from entry to entry for the first two, then another.
      bag.set("destination.uid", AttributeValue.ofString(i < 2 ? "a" : "b"));
      expect(encoder.append(bag, i32.MAX_VALUE)).toBe(true);
      const fresh = new AttributeBag();
      fresh.set("source.ip", AttributeValue.ofBytes(ips[i].slice(0)));
      fresh.set("source.port", AttributeValue.ofInt64(ports[i]));
      fresh.setString("destination.uid", i < 2 ? "a" : "b");
      reference.push(fresh);
    }
    expect(hex(encoder.finish())).toBe(hex(encodeReportRequest(reference, GLOBAL_WORD_COUNT)));
  });

  it("gives the same bytes after an entry was taken back for its size and the next message started", () => {
    const values = new RequestValues();
    const bag = new AttributeBag();
    const encoder = new ReportRequestEncoder();
    // Three entries fit a message: the fourth is taken back, and the fifth repeats it in the next message.
    const sizes: i64[] = [5, 5, 5, 6, 6];
    const out = new Array<string>();
    const expected = new Array<string>();
    encoder.begin(GLOBAL_WORD_COUNT);
    let batch = new Array<AttributeBag>();
    for (let i = 0; i < sizes.length; i++) {
      values.reset();
      bag.clear();
      bag.set("request.size", values.int64(sizes[i]));
      bag.setString("my.attr", "a long enough value to make two entries too many");
      const fresh = new AttributeBag();
      fresh.set("request.size", AttributeValue.ofInt64(sizes[i]));
      fresh.setString("my.attr", "a long enough value to make two entries too many");
      if (!encoder.append(bag, 110)) {
        out.push(hex(encoder.finish()));
        expected.push(hex(encodeReportRequest(batch, GLOBAL_WORD_COUNT)));
        batch = [];
        encoder.begin(GLOBAL_WORD_COUNT);
        expect(encoder.append(bag, 110)).toBe(true);
      }
      batch.push(fresh);
    }
    out.push(hex(encoder.finish()));
    expected.push(hex(encodeReportRequest(batch, GLOBAL_WORD_COUNT)));
    expect(out.length).toBe(2);
    expect(out.join(" ")).toBe(expected.join(" "));
  });

  it("encodes an empty batch as just the semantics and the word count", () => {
    expect(renderReport(encodeReportRequest([], 222))).toBe("gwc=222 semantics=1");
  });

  it("starts each batch of a reused encoder with an empty dictionary", () => {
    const encoder = new ReportRequestEncoder();
    const a = new AttributeBag();
    a.setString("my.a", "v1");
    const b = new AttributeBag();
    b.setString("my.b", "v1");
    expect(renderReport(encoder.encode([a], 222))).toBe("entry(s[-1]=-2) dw:my.a dw:v1 gwc=222 semantics=1");
    expect(renderReport(encoder.encode([b], 50))).toBe("entry(s[-1]=-2) dw:my.b dw:v1 gwc=50 semantics=1");
  });
});
