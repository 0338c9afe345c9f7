// API key extraction (hub-client §4, upstream http_api_spec_parser_impl.cc):
// configured locations in order, else query `key`, query `api_key`, header
// `x-api-key`; the first *present* location wins, even with an empty value;
// query values are not percent-decoded.
import { ApiKeyIn, ApiKeyLocation, cookieValue, DEFAULT_API_KEY_LOCATIONS, extractApiKey } from "../../assembly/api_key";
import { RequestView } from "../../assembly/request";

function request(path: string, headers: string[]): RequestView {
  const r = new RequestView();
  if (path.length > 0) r.headers.set(":path", path);
  for (let i = 0; i + 1 < headers.length; i += 2) r.headers.set(headers[i], headers[i + 1]);
  return r;
}

class Row {
  constructor(public path: string, public headers: string[], public expected: string | null) {}
}

function expectRows(locations: ApiKeyLocation[], rows: Row[]): void {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const got = extractApiKey(locations, request(row.path, row.headers));
    const label = row.path + " " + row.headers.join(",");
    if (row.expected === null) expect(got).toBeNull(label);
    else expect(got).toBe(row.expected, label);
  }
}

describe("extractApiKey with the default locations", () => {
  it("lists query key, query api_key, header x-api-key in that order", () => {
    expect(DEFAULT_API_KEY_LOCATIONS.length).toBe(3);
    expect(DEFAULT_API_KEY_LOCATIONS[0].kind).toBe(ApiKeyIn.Query);
    expect(DEFAULT_API_KEY_LOCATIONS[0].name).toBe("key");
    expect(DEFAULT_API_KEY_LOCATIONS[1].kind).toBe(ApiKeyIn.Query);
    expect(DEFAULT_API_KEY_LOCATIONS[1].name).toBe("api_key");
    expect(DEFAULT_API_KEY_LOCATIONS[2].kind).toBe(ApiKeyIn.Header);
    expect(DEFAULT_API_KEY_LOCATIONS[2].name).toBe("x-api-key");
  });

  it("finds the key (rows that must match)", () => {
    expectRows(DEFAULT_API_KEY_LOCATIONS, [
      new Row("/a?key=k1", [], "k1"),
      new Row("/a?api_key=k2", [], "k2"),
      new Row("/a", ["x-api-key", "k3"], "k3"),
      // earliest location wins whatever the request order
      new Row("/a?api_key=second&key=first", ["x-api-key", "third"], "first"),
      new Row("/a?api_key=second", ["x-api-key", "third"], "second"),
      // repeated names: first occurrence
      new Row("/a?key=one&key=two", [], "one"),
      // percent-encoding kept raw
      new Row("/a?key=a%2Fb%20c+d", [], "a%2Fb%20c+d"),
      // empty values count as present and stop the search (§4)
      new Row("/a?key=", ["x-api-key", "h"], ""),
      new Row("/a?key", ["x-api-key", "h"], ""),
      new Row("/a?api_key=&x=1", ["x-api-key", "h"], ""),
      new Row("/a", ["x-api-key", ""], ""),
    ]);
  });

  it("finds nothing (rows that must not match)", () => {
    expectRows(DEFAULT_API_KEY_LOCATIONS, [
      new Row("/a", [], null),
      new Row("/a?Key=k", [], null),
      new Row("/a?keys=k&apikey=k", [], null),
      new Row("/a/key=k", [], null),
      new Row("", [], null),
      new Row("/a", ["x-api-key-2", "k", "api_key", "k"], null),
    ]);
  });
});

describe("extractApiKey with configured locations", () => {
  it("replaces the defaults and keeps configured order", () => {
    const locations = [new ApiKeyLocation(ApiKeyIn.Header, "x-custom-key"), new ApiKeyLocation(ApiKeyIn.Query, "token")];
    expectRows(locations, [
      new Row("/a?token=q", ["x-custom-key", "h"], "h"),
      new Row("/a?token=q", [], "q"),
      new Row("/a?key=default", ["x-api-key", "default"], null),
      new Row("/a?token=", [], ""),
    ]);
  });

  it("reads cookies as Envoy's cookie helper: first pair, names case-sensitive, empty is absent", () => {
    const locations = [new ApiKeyLocation(ApiKeyIn.Cookie, "sid"), new ApiKeyLocation(ApiKeyIn.Header, "x-api-key")];
    expectRows(locations, [
      new Row("/a", ["cookie", "sid=abc"], "abc"),
      new Row("/a", ["cookie", "theme=dark; sid=abc; lang=en"], "abc"),
      new Row("/a", ["cookie", "theme=dark;sid=abc"], "abc"),
      new Row("/a", ["cookie", "sid=first; sid=second"], "first"),
      new Row("/a", ["cookie", "sid=\"quoted value\""], "quoted value"),
      new Row("/a", ["cookie", "sid=a=b"], "a=b"),
      // the cookie is tried first, whatever the header says
      new Row("/a", ["cookie", "sid=c", "x-api-key", "h"], "c"),
      // absent, empty, other case, or a pair without `=`: the next location decides
      new Row("/a", ["x-api-key", "h"], "h"),
      new Row("/a", ["cookie", "sid=", "x-api-key", "h"], "h"),
      new Row("/a", ["cookie", "sid=\"\"", "x-api-key", "h"], "h"),
      new Row("/a", ["cookie", "SID=abc", "x-api-key", "h"], "h"),
      new Row("/a", ["cookie", "sid; x=1", "x-api-key", "h"], "h"),
      new Row("/a", ["cookie", "xsid=abc; sidx=abc"], null),
      new Row("/a?sid=query", [], null),
    ]);
  });

  it("cookieValue walks every pair", () => {
    expect(cookieValue("a=1; b=2;  c=3", "c")).toBe("3");
    expect(cookieValue("a=1; b=2", "d")).toBeNull();
    expect(cookieValue("", "a")).toBeNull();
    expect(cookieValue(";;; a=1", "a")).toBe("1");
  });

  it("reads a very long key", () => {
    let key = "";
    for (let i = 0; i < 4096; i++) key += "k";
    expectRows(DEFAULT_API_KEY_LOCATIONS, [new Row("/a?key=" + key, [], key)]);
  });

  it("finds no key with an empty location list", () => {
    expect(extractApiKey([], request("/a?key=k", ["x-api-key", "k"]))).toBeNull();
  });
});
