// request.url_path and request.query_params (hub-client §2.2): split on `&`,
// name/value at the first `=`, a bare name gets "", no percent-decoding, the
// first occurrence wins; and the single-parameter lookup the API key uses (§4).
import { queryParam, queryParams, urlPath } from "../../assembly/attributes/query";

describe("urlPath", () => {
  it("cuts :path at the first ?", () => {
    const rows: string[][] = [
      ["/a/b", "/a/b"],
      ["/a/b?x=1", "/a/b"],
      ["/a?x=1?y=2", "/a"],
      ["/?", "/"],
      ["?q", ""],
      ["", ""],
      ["/a%3Fb", "/a%3Fb"],
    ];
    for (let i = 0; i < rows.length; i++) expect(urlPath(rows[i][0])).toBe(rows[i][1], rows[i][0]);
  });
});

describe("queryParams", () => {
  it("reads names and values as upstream did", () => {
    const m = queryParams("/p?a=1&b=&c&d=x=y&a=2&e=%20%2F+")!;
    expect(m.keys).toStrictEqual(["a", "b", "c", "d", "e"]);
    expect(m.get("a")).toBe("1"); // first occurrence wins
    expect(m.get("b")).toBe("");
    expect(m.get("c")).toBe(""); // bare name
    expect(m.get("d")).toBe("x=y"); // split at the first =
    expect(m.get("e")).toBe("%20%2F+"); // no decoding, + stays
  });

  it("is case-sensitive and keeps a ? inside the query", () => {
    const m = queryParams("/p?Key=A&key=b&q=a?b")!;
    expect(m.get("Key")).toBe("A");
    expect(m.get("key")).toBe("b");
    expect(m.get("q")).toBe("a?b");
  });

  it("is null without a query or with an empty one", () => {
    const rows: string[] = ["/p", "/p?", "", "/p?&", "/p?&&"];
    for (let i = 0; i < rows.length; i++) expect(queryParams(rows[i])).toBeNull(rows[i]);
  });

  it("handles a very long query", () => {
    let path = "/p?";
    for (let i = 0; i < 2000; i++) path += (i > 0 ? "&" : "") + "k" + i.toString() + "=v" + i.toString();
    const m = queryParams(path)!;
    expect(m.size).toBe(2000);
    expect(m.get("k1999")).toBe("v1999");
  });
});

class Row {
  constructor(public path: string, public name: string, public expected: string | null) {}
}

describe("queryParam", () => {
  it("finds the first occurrence, raw; empty values count as present", () => {
    const rows: Row[] = [
      new Row("/p?key=abc", "key", "abc"),
      new Row("/p?a=1&key=abc&key=def", "key", "abc"),
      new Row("/p?key=", "key", ""),
      new Row("/p?key", "key", ""),
      new Row("/p?key&key=late", "key", ""),
      new Row("/p?key=a%20b%2B", "key", "a%20b%2B"),
      new Row("/p?key=a=b", "key", "a=b"),
      new Row("/p?x=key&key=v", "key", "v"),
      new Row("/p?&&key=v&", "key", "v"),
      new Row("/p?api_key=k", "api_key", "k"),
    ];
    for (let i = 0; i < rows.length; i++) {
      expect(queryParam(rows[i].path, rows[i].name)).toBe(rows[i].expected, rows[i].path);
    }
  });

  it("is null when the name is absent", () => {
    const rows: Row[] = [
      new Row("/p", "key", null),
      new Row("/p?", "key", null),
      new Row("/p?keys=1", "key", null),
      new Row("/p?ke=1", "key", null),
      new Row("/p?Key=1", "key", null),
      new Row("/p?x=key", "key", null),
      new Row("/key=1", "key", null),
      new Row("/p?my_key=1", "key", null),
    ];
    for (let i = 0; i < rows.length; i++) {
      expect(queryParam(rows[i].path, rows[i].name)).toBeNull(rows[i].path);
    }
  });

  it("agrees with queryParams on every name of a query", () => {
    const path = "/p?a=1&b&c=&a=2&d=x%3D&e=f=g";
    const m = queryParams(path)!;
    for (let i = 0; i < m.keys.length; i++) {
      expect(queryParam(path, m.keys[i])).toBe(m.values[i], m.keys[i]);
    }
  });
});
