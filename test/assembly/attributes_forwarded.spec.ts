// Forwarded attributes (hub-client §2.5, upstream kForwardAllowlist in
// src/istio/control/http/attributes_builder.cc): the header carries a base64
// (standard, padded) mesh.hub.v1.Attributes; only six names, and only as
// non-empty strings, are accepted; a malformed header is ignored.
import {
  encodeForwardedAttributes,
  FORWARDED_HEADER,
  MAX_FORWARDED_ENTRIES,
  MAX_FORWARDED_HEADER_BYTES,
  MAX_FORWARDED_VALUE_BYTES,
  readForwardedAttributes,
} from "../../assembly/proto/forwarded";
import { AttributeBag } from "../../assembly/attributes/bag";
import { AttributeValue, StringMap } from "../../assembly/attributes/value";
import { base64Encode } from "../../assembly/proto/base64";
import { encodeAttributes } from "../../assembly/proto/attributes_codec";

const ALLOWED: string[] = [
  "source.uid",
  "source.namespace",
  "destination.service.name",
  "destination.service.uid",
  "destination.service.host",
  "destination.service.namespace",
];

function header(bag: AttributeBag): string {
  return base64Encode(encodeAttributes(bag));
}

describe("forwarded attributes header", () => {
  it("is x-mesh-attributes (the project's name for x-istio-attributes)", () => {
    expect(FORWARDED_HEADER).toBe("x-mesh-attributes");
  });

  it("accepts every allow-listed string attribute (round trip)", () => {
    const bag = new AttributeBag();
    for (let i = 0; i < ALLOWED.length; i++) bag.setString(ALLOWED[i], "v" + i.toString());
    const text = encodeForwardedAttributes(bag);
    expect(text).toBe(header(bag));
    const back = readForwardedAttributes(text).bag;
    expect(back.names).toStrictEqual(ALLOWED);
    for (let i = 0; i < ALLOWED.length; i++) expect(back.getString(ALLOWED[i])).toBe("v" + i.toString());
  });

  it("drops names outside the allow-list (anti-spoofing)", () => {
    const rows: string[] = [
      "source.principal", "source.user", "source.ip", "request.auth.principal", "destination.service",
      "source.uid.extra", "Source.uid", "request.headers", "request.api_key", "",
    ];
    for (let i = 0; i < rows.length; i++) {
      const bag = new AttributeBag();
      bag.setString(rows[i], "spoof");
      bag.setString("source.uid", "kubernetes://a.b");
      const back = readForwardedAttributes(header(bag)).bag;
      expect(back.has(rows[i])).toBe(false, rows[i]);
      expect(back.getString("source.uid")).toBe("kubernetes://a.b", rows[i]);
    }
  });

  it("drops allow-listed names whose value is empty or not a string", () => {
    const m = new StringMap();
    m.set("a", "b");
    const bag = new AttributeBag();
    bag.setString("source.uid", "");
    bag.set("source.namespace", AttributeValue.ofInt64(1));
    bag.set("destination.service.name", AttributeValue.ofBytes(new Uint8Array(2)));
    bag.set("destination.service.uid", AttributeValue.ofBool(true));
    bag.set("destination.service.host", AttributeValue.ofMap(m));
    bag.set("destination.service.namespace", AttributeValue.ofDurationNanos(5));
    expect(readForwardedAttributes(header(bag)).bag.size).toBe(0);
  });

  it("ignores an absent, empty or malformed header", () => {
    expect(readForwardedAttributes(null).bag.size).toBe(0);
    expect(readForwardedAttributes("").bag.size).toBe(0);
    const rows: string[] = [
      "not base64!", // not base64
      "Zg", // unpadded
      "CgoKAWE=", // base64 of truncated protobuf
      "////", // bytes ff ff ff: bad protobuf key
    ];
    for (let i = 0; i < rows.length; i++) expect(readForwardedAttributes(rows[i]).bag.size).toBe(0, rows[i]);
  });

  // A header whose protobuf does not parse is ignored as a whole (upstream:
  // ParseFromString failed → nothing taken). Entry 2 is a valid source.uid;
  // entry 1's AttributeValue declares a string longer than itself.
  it("takes nothing from a header whose protobuf is malformed in a nested value", () => {
    const bad = new Uint8Array(10);
    const badHex = "0a080a01611203120562";
    for (let i = 0; i < 10; i++) bad[i] = <u8>I32.parseInt(badHex.substr(i * 2, 2), 16);
    const good = new AttributeBag();
    good.setString("source.uid", "kubernetes://spoof.ns");
    const goodBytes = encodeAttributes(good);
    const all = new Uint8Array(bad.length + goodBytes.length);
    all.set(bad, 0);
    all.set(goodBytes, bad.length);
    expect(readForwardedAttributes(base64Encode(all)).bag.size).toBe(0);
  });

  it("encodes nothing for an empty bag", () => {
    expect(encodeForwardedAttributes(new AttributeBag())).toBe("");
  });

  it("round-trips values up to MAX_FORWARDED_VALUE_BYTES and drops (counts) longer ones", () => {
    let v = "";
    for (let i = 0; i < MAX_FORWARDED_VALUE_BYTES; i++) v += "u";
    const bag = new AttributeBag();
    bag.setString("source.uid", v);
    bag.setString("source.namespace", v + "u");
    const back = readForwardedAttributes(encodeForwardedAttributes(bag));
    expect(back.bag.getString("source.uid")).toBe(v);
    expect(back.bag.has("source.namespace")).toBe(false);
    expect(back.dropped).toBe(1);
  });

  it("drops (counts) a value that is not valid UTF-8, keeps the others", () => {
    // Attributes{ "source.uid": string "a" ED BF BF (a lone surrogate's WTF-8), "source.namespace": "web" }
    const hex = "0a140a0a736f757263652e75696412061204" + "61edbfbf" + "0a190a10736f757263652e6e616d65737061636512051203776562";
    const bytes = new Uint8Array(hex.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = <u8>I32.parseInt(hex.substr(i * 2, 2), 16);
    const back = readForwardedAttributes(base64Encode(bytes));
    expect(back.bag.has("source.uid")).toBe(false);
    expect(back.bag.getString("source.namespace")).toBe("web");
    expect(back.dropped).toBe(1);
  });

  it("drops (counts) a header over MAX_FORWARDED_HEADER_BYTES and a malformed one", () => {
    let big = "";
    for (let i = 0; i < MAX_FORWARDED_HEADER_BYTES / 4 + 1; i++) big += "AAAA";
    const r = readForwardedAttributes(big);
    expect(r.bag.size).toBe(0);
    expect(r.dropped).toBe(1);
    expect(readForwardedAttributes("not base64!").dropped).toBe(1);
    expect(readForwardedAttributes(null).dropped).toBe(0);
  });

  it("reads at most MAX_FORWARDED_ENTRIES entries and counts the rest", () => {
    const bag = new AttributeBag();
    for (let i = 0; i < MAX_FORWARDED_ENTRIES + 3; i++) bag.setString("x" + i.toString(), "v");
    bag.setString("source.uid", "kubernetes://late.ns");
    const r = readForwardedAttributes(encodeForwardedAttributes(bag));
    expect(r.dropped).toBe(4);
    expect(r.bag.has("source.uid")).toBe(false);
  });
});
