// evaluateRequest: the hub client's per-request logic end to end on a hand-built
// RequestView. Order of application (issue 2 / the spec): static filter →
// static service → forwarded header (allow-listed, unless
// ignoreForwardedAttributes) → request-derived (with API attributes and
// request.api_key); quotas on the final bag (hub-client §2.1, §4, §5).
import { compileConfig } from "../../assembly/config/compile";
import { ClientConfig } from "../../assembly/config/client_config";
import { Evaluation, evaluateRequest } from "../../assembly/evaluate";
import { requestWithHeaders, RequestView } from "../../assembly/request";
import { StringMap } from "../../assembly/attributes/value";
import { AttributeBag } from "../../assembly/attributes/bag";
import { readForwardedAttributes } from "../../assembly/proto/forwarded";
import { base64Encode } from "../../assembly/proto/base64";
import { encodeAttributes } from "../../assembly/proto/attributes_codec";

const PETSTORE = "petstore.default.svc.cluster.local";

function q(s: string): string {
  return s.replaceAll("'", "\"");
}

function config(text: string): ClientConfig {
  const r = compileConfig(q(text));
  expect(r.error).toBe("", text);
  return r.config!;
}

function s(name: string, value: string): string {
  return "'" + name + "':{'stringValue':'" + value + "'}";
}

// Built as the embedding exports build it: requestWithHeaders takes the
// forwarded-attributes header out of the map.
function request(method: string, path: string, headers: string[]): RequestView {
  const h = new StringMap();
  if (method.length > 0) h.set(":method", method);
  if (path.length > 0) h.set(":path", path);
  for (let i = 0; i + 1 < headers.length; i += 2) h.set(headers[i], headers[i + 1]);
  const r = requestWithHeaders(h);
  r.destinationService = PETSTORE;
  return r;
}

function forwarded(pairs: string[]): string {
  const bag = new AttributeBag();
  for (let i = 0; i + 1 < pairs.length; i += 2) bag.setString(pairs[i], pairs[i + 1]);
  return base64Encode(encodeAttributes(bag));
}

function quotas(e: Evaluation): string {
  const parts = new Array<string>();
  for (let i = 0; i < e.quotas.length; i++) parts.push(e.quotas[i].quota + "=" + e.quotas[i].charge.toString());
  return parts.join(",");
}

// Filter-level and service-level static attributes that collide on purpose.
const LAYERED = "{'httpClientConfig':{" +
  "'hubAttributes':{'attributes':{" + s("layer", "filter") + "," + s("filter.only", "f") + "," + s("source.uid", "static-filter") + "," + s("request.host", "static-host") + "}}," +
  "'serviceConfigs':{'" + PETSTORE + "':{'hubAttributes':{'attributes':{" + s("layer", "service") + "," + s("destination.service.name", "static-service") + "}}}}}}";

describe("evaluateRequest order of application", () => {
  it("applies static filter, then static service attributes (later wins)", () => {
    const e = evaluateRequest(config(LAYERED), request("GET", "/a", []), false);
    expect(e.attributes.getString("layer")).toBe("service");
    expect(e.attributes.getString("filter.only")).toBe("f");
    expect(e.service).not.toBeNull();
  });

  it("lets forwarded attributes override static ones, and derived attributes override both", () => {
    const header = forwarded(["source.uid", "kubernetes://client.ns", "destination.service.name", "fwd-service", "request.host", "spoofed"]);
    const e = evaluateRequest(config(LAYERED), request("GET", "/a", [":authority", "real-host", "x-mesh-attributes", header]), false);
    expect(e.attributes.getString("source.uid")).toBe("kubernetes://client.ns");
    expect(e.attributes.getString("destination.service.name")).toBe("fwd-service");
    // request.host is not allow-listed: the static value stays until derivation writes the real one
    expect(e.attributes.getString("request.host")).toBe("real-host");
  });

  it("keeps static values when the forwarded header is absent or malformed", () => {
    const rows: string[] = ["", "%%%", "Zg=="];
    for (let i = 0; i < rows.length; i++) {
      const headers: string[] = rows[i].length > 0 ? ["x-mesh-attributes", rows[i]] : [];
      const e = evaluateRequest(config(LAYERED), request("GET", "/a", headers), false);
      expect(e.attributes.getString("source.uid")).toBe("static-filter", rows[i]);
    }
  });

  it("drops forwarded names outside the allow-list and empty or non-string values", () => {
    const bag = new AttributeBag();
    bag.setString("source.principal", "spiffe-spoof");
    bag.setString("source.namespace", "");
    bag.setString("request.auth.principal", "spoof");
    const header = base64Encode(encodeAttributes(bag));
    const e = evaluateRequest(config(LAYERED), request("GET", "/a", ["x-mesh-attributes", header]), false);
    expect(e.attributes.has("source.principal")).toBe(false);
    expect(e.attributes.has("source.namespace")).toBe(false);
    expect(e.attributes.has("request.auth.principal")).toBe(false);
  });

  it("does not read the forwarded header with ignoreForwardedAttributes, and never reports it in request.headers", () => {
    const c = config("{'httpClientConfig':{'ignoreForwardedAttributes':true,'hubAttributes':{'attributes':{" + s("source.uid", "static") + "}}}}");
    const header = forwarded(["source.uid", "kubernetes://spoof.ns"]);
    const e = evaluateRequest(c, request("GET", "/a", ["x-mesh-attributes", header, "x-user", "u"]), false);
    expect(e.attributes.getString("source.uid")).toBe("static");
    const h = e.attributes.get("request.headers")!.map!;
    expect(h.has("x-mesh-attributes")).toBe(false);
    expect(h.get("x-user")).toBe("u");
    // with the header read, it is still not in request.headers
    const read = evaluateRequest(config(LAYERED), request("GET", "/a", ["x-mesh-attributes", header]), false);
    expect(read.attributes.get("request.headers")!.map!.has("x-mesh-attributes")).toBe(false);
  });

  it("derives source.namespace from the peer over a forwarded one (derived is last)", () => {
    const r = request("GET", "/a", ["x-mesh-attributes", forwarded(["source.namespace", "fwd"])]);
    r.peerPrincipal = "spiffe://cluster.local/ns/peer/sa/x";
    expect(evaluateRequest(config(LAYERED), r, false).attributes.getString("source.namespace")).toBe("peer");
    const noPeer = request("GET", "/a", ["x-mesh-attributes", forwarded(["source.namespace", "fwd"])]);
    expect(evaluateRequest(config(LAYERED), noPeer, false).attributes.getString("source.namespace")).toBe("fwd");
  });

  it("still applies static and forwarded attributes when no ServiceConfig resolves", () => {
    const r = request("GET", "/a?key=k", ["x-mesh-attributes", forwarded(["source.uid", "fwd"])]);
    r.destinationService = "unknown.svc";
    const e = evaluateRequest(config(LAYERED), r, false);
    expect(e.service).toBeNull();
    expect(e.attributes.getString("layer")).toBe("filter");
    expect(e.attributes.getString("source.uid")).toBe("fwd");
    expect(e.attributes.getString("request.path")).toBe("/a?key=k");
    // no ServiceConfig: no API key, no quotas
    expect(e.apiKey).toBeNull();
    expect(e.attributes.has("request.api_key")).toBe(false);
    expect(e.quotas.length).toBe(0);
  });
});

const API = "{'resources':[" +
  "{'kind':'HTTPAPISpec','metadata':{'name':'petstore'},'spec':{" +
  "'attributes':{'attributes':{" + s("api.service", "petstore") + "," + s("api.version", "v1") + "}}," +
  "'patterns':[" +
  "{'attributes':{'attributes':{" + s("api.operation", "getPet") + "}},'httpMethod':'GET','uriTemplate':'/pets/{id}'}," +
  "{'attributes':{'attributes':{" + s("api.operation", "listPets") + "}},'uriTemplate':'/pets'}," +
  "{'attributes':{'attributes':{" + s("api.operation", "search") + "}},'httpMethod':'GET','regex':'/search\\\\?.*'}]}}," +
  "{'kind':'HTTPAPISpecBinding','metadata':{'name':'b'},'spec':{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'petstore'}]}}," +
  "{'kind':'QuotaSpec','metadata':{'name':'q'},'spec':{'rules':[" +
  "{'quotas':[{'quota':'requests'}]}," +
  "{'match':[{'clause':{'api.operation':{'exact':'getPet'}}}],'quotas':[{'quota':'pet-reads','charge':2}]}," +
  "{'match':[{'clause':{'request.api_key':{'prefix':'gold-'}}},{'clause':{'request.headers[x-tier]':{'exact':'gold'}}}],'quotas':[{'quota':'gold'}]}," +
  "{'match':[{'clause':{'request.method':{'exact':'DELETE'},'request.url_path':{'regex':'/pets/[0-9]+'}}}],'quotas':[{'quota':'deletes','charge':5}]}" +
  "]}}," +
  "{'kind':'QuotaSpecBinding','metadata':{'name':'qb'},'spec':{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'q'}]}}]}";

describe("evaluateRequest API attributes", () => {
  it("adds spec and pattern attributes when a template matches, and reports the winner", () => {
    const e = evaluateRequest(config(API), request("GET", "/pets/7?verbose=1", []), true);
    expect(e.api.matched).toBe(true);
    expect(e.apiPattern).toBe("/pets/{id}");
    expect(e.api.bindingNames).toStrictEqual(["id"]);
    expect(e.api.bindingValues).toStrictEqual(["7"]);
    expect(e.attributes.getString("api.service")).toBe("petstore");
    expect(e.attributes.getString("api.version")).toBe("v1");
    expect(e.attributes.getString("api.operation")).toBe("getPet");
  });

  it("adds no API attributes when no pattern matched", () => {
    const rows: string[][] = [["GET", "/owners"], ["POST", "/pets/7"], ["GET", "/search"]];
    for (let i = 0; i < rows.length; i++) {
      const e = evaluateRequest(config(API), request(rows[i][0], rows[i][1], []), false);
      expect(e.api.matched).toBe(false, rows[i][1]);
      expect(e.apiPattern).toBe("", rows[i][1]);
      expect(e.attributes.has("api.service")).toBe(false, rows[i][1]);
      expect(e.attributes.has("api.operation")).toBe(false, rows[i][1]);
    }
  });

  it("matches regex patterns against the path with its query", () => {
    const e = evaluateRequest(config(API), request("GET", "/search?q=cat", []), false);
    expect(e.apiPattern).toBe("/search\\?.*");
    expect(e.attributes.getString("api.operation")).toBe("search");
  });

  it("skips API matching without :method or :path", () => {
    expect(evaluateRequest(config(API), request("", "/pets", []), false).api.matched).toBe(false);
    expect(evaluateRequest(config(API), request("GET", "", []), false).api.matched).toBe(false);
  });
});

describe("evaluateRequest API key", () => {
  it("uses the default locations, even for a service without API specs", () => {
    const c = config("{'httpClientConfig':{'serviceConfigs':{'" + PETSTORE + "':{}}}}");
    const rows: string[][] = [
      ["/a?key=k1", "", "k1"],
      ["/a?api_key=k2", "", "k2"],
      ["/a", "k3", "k3"],
      ["/a?key=&api_key=x", "h", ""],
      ["/a?key=a%2Bb", "", "a%2Bb"],
    ];
    for (let i = 0; i < rows.length; i++) {
      const headers: string[] = rows[i][1].length > 0 ? ["x-api-key", rows[i][1]] : [];
      const e = evaluateRequest(c, request("GET", rows[i][0], headers), false);
      expect(e.apiKey).toBe(rows[i][2], rows[i][0]);
      expect(e.attributes.getString("request.api_key")).toBe(rows[i][2], rows[i][0]);
    }
    const none = evaluateRequest(c, request("GET", "/a?token=t", []), false);
    expect(none.apiKey).toBeNull();
    expect(none.attributes.has("request.api_key")).toBe(false);
  });

  it("uses only the configured locations when a spec names some; header names are case-insensitive", () => {
    const c = config("{'resources':[" +
      "{'kind':'HTTPAPISpec','metadata':{'name':'k'},'spec':{'apiKeys':[{'header':'X-Partner-Key'},{'query':'token'}]}}," +
      "{'kind':'HTTPAPISpecBinding','metadata':{'name':'b'},'spec':{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'k'}]}}]}");
    expect(evaluateRequest(c, request("GET", "/a?token=t", ["x-partner-key", "p"]), false).apiKey).toBe("p");
    expect(evaluateRequest(c, request("GET", "/a?token=t", []), false).apiKey).toBe("t");
    expect(evaluateRequest(c, request("GET", "/a?key=k", ["x-api-key", "k"]), false).apiKey).toBeNull();
  });
});

describe("evaluateRequest quotas", () => {
  it("charges on the final bag: API attributes, request.api_key and header entries count", () => {
    const c = config(API);
    const rows: string[][] = [
      // method, path, x-tier header, expected charges
      ["GET", "/pets/7", "", "requests=1,pet-reads=2"],
      ["GET", "/owners", "", "requests=1"],
      ["GET", "/owners?key=gold-123", "", "requests=1,gold=1"],
      ["GET", "/owners?key=silver", "gold", "requests=1,gold=1"],
      ["GET", "/pets/7?key=gold-1", "", "requests=1,pet-reads=2,gold=1"],
      ["DELETE", "/pets/42?force=1", "", "requests=1,deletes=5"],
      ["DELETE", "/pets/abc", "", "requests=1"],
      ["GET", "/owners?key=silver", "Gold", "requests=1"],
    ];
    for (let i = 0; i < rows.length; i++) {
      const headers: string[] = rows[i][2].length > 0 ? ["x-tier", rows[i][2]] : [];
      const e = evaluateRequest(c, request(rows[i][0], rows[i][1], headers), false);
      expect(quotas(e)).toBe(rows[i][3], rows[i][0] + " " + rows[i][1] + " " + rows[i][2]);
    }
  });
});

describe("evaluateRequest forwarded header out", () => {
  it("encodes filter then service forwardAttributes (later wins)", () => {
    const c = config("{'httpClientConfig':{" +
      "'forwardAttributes':{'attributes':{" + s("source.uid", "kubernetes://me.ns") + "," + s("destination.service.host", "filter") + "}}," +
      "'serviceConfigs':{'" + PETSTORE + "':{'forwardAttributes':{'attributes':{" + s("destination.service.host", "svc") + "}}}}}}");
    const e = evaluateRequest(c, request("GET", "/", []), false);
    const back = readForwardedAttributes(e.forwardHeader).bag;
    expect(back.getString("source.uid")).toBe("kubernetes://me.ns");
    expect(back.getString("destination.service.host")).toBe("svc");
    // an incoming header is never passed through as is
    const incoming = forwarded(["source.uid", "kubernetes://other.ns"]);
    const e2 = evaluateRequest(c, request("GET", "/", ["x-mesh-attributes", incoming]), false);
    expect(readForwardedAttributes(e2.forwardHeader).bag.getString("source.uid")).toBe("kubernetes://me.ns");
  });

  it("sends no header when nothing is configured to forward", () => {
    const e = evaluateRequest(config(LAYERED), request("GET", "/", ["x-mesh-attributes", forwarded(["source.uid", "x"])]), false);
    expect(e.forwardHeader).toBe("");
  });
});
