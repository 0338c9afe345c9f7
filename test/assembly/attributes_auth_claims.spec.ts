// request.auth.* from a verified JWT payload (hub-client §2.3, upstream
// src/envoy/http/authn/authn_utils.cc): every claim becomes a string list (a
// JSON string is split on spaces, an array keeps its strings, other kinds are
// dropped); principal = first iss + "/" + first sub, only when both exist.
import { addAuthAttributes } from "../../assembly/attributes/auth_claims";
import { AttributeBag } from "../../assembly/attributes/bag";
import { ValueKind, StringMap } from "../../assembly/attributes/value";

function auth(payload: string): AttributeBag {
  const bag = new AttributeBag();
  addAuthAttributes(bag, payload);
  return bag;
}

function claims(bag: AttributeBag): StringMap {
  const v = bag.get("request.auth.claims");
  expect(v).not.toBeNull("request.auth.claims");
  expect(v!.kind).toBe(ValueKind.StringMap);
  return v!.map!;
}

describe("addAuthAttributes", () => {
  it("derives principal, audiences, presenter, claims and raw_claims", () => {
    const payload = "{\"iss\":\"https://issuer\",\"sub\":\"alice\",\"aud\":[\"a1\",\"a2\"],\"azp\":\"web\",\"scope\":\"read write\"}";
    const bag = auth(payload);
    expect(bag.getString("request.auth.principal")).toBe("https://issuer/alice");
    expect(bag.getString("request.auth.audiences")).toBe("a1");
    expect(bag.getString("request.auth.presenter")).toBe("web");
    expect(bag.getString("request.auth.raw_claims")).toBe(payload);
    const c = claims(bag);
    expect(c.get("iss")).toBe("https://issuer");
    expect(c.get("aud")).toBe("a1,a2");
    expect(c.get("scope")).toBe("read,write"); // "a b" becomes a,b
  });

  it("splits string claims on spaces and takes the first item for single-valued attributes", () => {
    const bag = auth("{\"iss\":\"i1 i2\",\"sub\":\"s1  s2\",\"aud\":\"x y\"}");
    expect(bag.getString("request.auth.principal")).toBe("i1/s1");
    expect(bag.getString("request.auth.audiences")).toBe("x");
    expect(claims(bag).get("sub")).toBe("s1,s2");
  });

  it("sets the principal only when both iss and sub exist", () => {
    const rows: string[] = [
      "{\"iss\":\"i\"}",
      "{\"sub\":\"s\"}",
      "{\"iss\":\"i\",\"sub\":42}",
      "{\"iss\":[],\"sub\":\"s\"}",
    ];
    for (let i = 0; i < rows.length; i++) {
      const bag = auth(rows[i]);
      expect(bag.has("request.auth.principal")).toBe(false, rows[i]);
      expect(bag.getString("request.auth.raw_claims")).toBe(rows[i]);
    }
  });

  it("drops numbers, booleans, objects and non-string array items", () => {
    const bag = auth("{\"exp\":1700000000,\"admin\":true,\"obj\":{\"a\":\"b\"},\"mixed\":[1,\"x\",false,\"y\"],\"n\":null}");
    const c = claims(bag);
    expect(c.keys).toStrictEqual(["mixed"]);
    expect(c.get("mixed")).toBe("x,y");
  });

  it("omits request.auth.claims when no claim survives", () => {
    const bag = auth("{\"exp\":1,\"iat\":2}");
    expect(bag.has("request.auth.claims")).toBe(false);
    expect(bag.has("request.auth.audiences")).toBe(false);
    expect(bag.getString("request.auth.raw_claims")).toBe("{\"exp\":1,\"iat\":2}");
  });

  it("adds nothing for an empty, malformed or non-object payload", () => {
    const rows: string[] = ["", "{", "not json", "[\"iss\"]", "\"iss\"", "null"];
    for (let i = 0; i < rows.length; i++) expect(auth(rows[i]).size).toBe(0, rows[i]);
  });

  it("overwrites earlier request.auth values in the bag", () => {
    const bag = new AttributeBag();
    bag.setString("request.auth.principal", "static");
    addAuthAttributes(bag, "{\"iss\":\"i\",\"sub\":\"s\"}");
    expect(bag.getString("request.auth.principal")).toBe("i/s");
  });
});
