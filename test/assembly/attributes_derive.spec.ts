// Request-derived check attributes (hub-client §2.2-2.3; upstream
// src/istio/control/http/attributes_builder.cc and
// src/envoy/http/mixer/check_data.cc), from a RequestView built by hand.
import { addRequestAttributes } from "../../assembly/request_derivation";
import { AttributeBag } from "../../assembly/attributes/bag";
import { ValueKind, StringMap } from "../../assembly/attributes/value";
import { requestWithHeaders, RequestView } from "../../assembly/request";

function hex(b: Uint8Array | null): string {
  if (b === null) return "null";
  let s = "";
  for (let i = 0; i < b.length; i++) {
    const v = <i32>b[i];
    s += (v < 16 ? "0" : "") + v.toString(16);
  }
  return s;
}

function request(pairs: string[]): RequestView {
  const r = new RequestView();
  for (let i = 0; i + 1 < pairs.length; i += 2) r.headers.set(pairs[i], pairs[i + 1]);
  return r;
}

function derive(r: RequestView): AttributeBag {
  const bag = new AttributeBag();
  addRequestAttributes(bag, r);
  return bag;
}

describe("addRequestAttributes: request facts", () => {
  it("derives host, method, path, url_path, query_params, scheme, referer, useragent, id", () => {
    const bag = derive(request([
      ":authority", "svc.ns.svc.cluster.local", ":method", "GET", ":path", "/a/b?key=k&x=%20", ":scheme", "https",
      "referer", "https://ref", "user-agent", "curl/8", "x-request-id", "rid-1",
    ]));
    expect(bag.getString("request.host")).toBe("svc.ns.svc.cluster.local");
    expect(bag.getString("request.method")).toBe("GET");
    expect(bag.getString("request.path")).toBe("/a/b?key=k&x=%20");
    expect(bag.getString("request.url_path")).toBe("/a/b");
    const q = bag.get("request.query_params")!;
    expect(q.kind).toBe(ValueKind.StringMap);
    expect(q.map!.get("key")).toBe("k");
    expect(q.map!.get("x")).toBe("%20");
    expect(bag.getString("request.scheme")).toBe("https");
    expect(bag.getString("request.referer")).toBe("https://ref");
    expect(bag.getString("request.useragent")).toBe("curl/8");
    expect(bag.getString("request.id")).toBe("rid-1");
  });

  it("applies upstream's defaults when headers are absent", () => {
    const bag = derive(new RequestView());
    expect(bag.getString("request.host")).toBe("");
    expect(bag.getString("request.path")).toBe("");
    expect(bag.getString("request.scheme")).toBe("http");
    expect(bag.getString("context.protocol")).toBe("http");
    expect(bag.get("connection.mtls")!.bool).toBe(false);
    expect(bag.get("request.time")!.kind).toBe(ValueKind.Timestamp);
    // omitted, not empty
    const omitted: string[] = [
      "request.headers", "request.method", "request.url_path", "request.query_params", "request.referer",
      "request.useragent", "request.id", "origin.ip", "source.ip", "source.port", "destination.ip",
      "destination.port", "connection.requested_server_name", "source.principal", "source.user",
      "source.namespace", "destination.principal", "request.auth.principal", "request.auth.raw_claims",
    ];
    for (let i = 0; i < omitted.length; i++) expect(bag.has(omitted[i])).toBe(false, omitted[i]);
  });

  it("falls back from :authority to host", () => {
    expect(derive(request(["host", "h.example"])).getString("request.host")).toBe("h.example");
    expect(derive(request([":authority", "a", "host", "h"])).getString("request.host")).toBe("a");
  });

  it("omits query_params for a path without a query or with an empty one", () => {
    const rows: string[] = ["/a", "/a?", "/a?&"];
    for (let i = 0; i < rows.length; i++) {
      const bag = derive(request([":path", rows[i]]));
      expect(bag.has("request.query_params")).toBe(false, rows[i]);
      expect(bag.getString("request.url_path")).toBe("/a", rows[i]);
    }
  });

  it("copies every header, pseudo-headers included, except x-mesh-attributes", () => {
    const h = new StringMap();
    const pairs = [":path", "/", ":method", "GET", "x-user", "alice", "x-mesh-attributes", "CgA=", "cookie", "c=1"];
    for (let i = 0; i < pairs.length; i += 2) h.set(pairs[i], pairs[i + 1]);
    const r = requestWithHeaders(h);
    expect(r.forwarded).toBe("CgA=");
    const m = derive(r).get("request.headers")!.map!;
    expect(m.keys).toStrictEqual([":path", ":method", "x-user", "cookie"]);
    expect(m.has("x-mesh-attributes")).toBe(false);
    expect(m.get("x-user")).toBe("alice");
  });

  it("omits request.headers when only the forwarded header was sent", () => {
    const h = new StringMap();
    h.set("x-mesh-attributes", "CgA=");
    expect(derive(requestWithHeaders(h)).has("request.headers")).toBe(false);
  });

  it("sets context.protocol to grpc only for the three gRPC content types (exact)", () => {
    const grpc: string[] = ["application/grpc", "application/grpc+proto", "application/grpc+json"];
    for (let i = 0; i < grpc.length; i++) {
      expect(derive(request(["content-type", grpc[i]])).getString("context.protocol")).toBe("grpc", grpc[i]);
    }
    const http: string[] = ["application/json", "application/grpc-web", "application/grpc; charset=utf-8", "Application/grpc", "application/grpc+thrift", ""];
    for (let i = 0; i < http.length; i++) {
      expect(derive(request(["content-type", http[i]])).getString("context.protocol")).toBe("http", http[i]);
    }
  });

  it("announces request.size from content-length at check time", () => {
    const rows: string[][] = [["42", "42"], ["0", "0"], ["-5", "0"], ["abc", "0"]];
    for (let i = 0; i < rows.length; i++) {
      const v = derive(request(["content-length", rows[i][0]])).get("request.size")!;
      expect(v.kind).toBe(ValueKind.Int64);
      expect(v.int.toString()).toBe(rows[i][1], rows[i][0]);
    }
    expect(derive(new RequestView()).get("request.size")!.int).toBe(0);
  });

  it("stamps request.time from the view's clock", () => {
    const r = new RequestView();
    r.timeNanos = 1_700_000_000_250_000_000;
    const t = derive(r).get("request.time")!;
    expect(t.int).toBe(1_700_000_000);
    expect(t.nanos).toBe(250_000_000);
  });
});

describe("addRequestAttributes: connection facts", () => {
  it("derives origin.ip and source.ip/port from the peer address (IPv4 and IPv6)", () => {
    const r = new RequestView();
    r.sourceAddress = "1.2.3.4:8080";
    r.destinationAddress = "[2001:db8::1]:15006";
    const bag = derive(r);
    expect(hex(bag.get("origin.ip")!.bytes)).toBe("01020304");
    expect(hex(bag.get("source.ip")!.bytes)).toBe("01020304");
    expect(bag.get("source.port")!.int).toBe(8080);
    expect(hex(bag.get("destination.ip")!.bytes)).toBe("20010db8000000000000000000000001");
    expect(bag.get("destination.port")!.int).toBe(15006);
    expect(bag.has("origin.port")).toBe(false);
  });

  it("omits ip attributes for an address that does not parse, keeping a valid port", () => {
    const r = new RequestView();
    r.sourceAddress = "pipe:9";
    const bag = derive(r);
    expect(bag.has("source.ip")).toBe(false);
    expect(bag.has("origin.ip")).toBe(false);
    expect(bag.get("source.port")!.int).toBe(9);
  });

  it("sets mtls and the requested server name", () => {
    const r = new RequestView();
    r.mtls = true;
    r.requestedServerName = "outbound_.80_._.svc.ns.svc.cluster.local";
    const bag = derive(r);
    expect(bag.get("connection.mtls")!.bool).toBe(true);
    expect(bag.getString("connection.requested_server_name")).toBe("outbound_.80_._.svc.ns.svc.cluster.local");
  });

  it("derives source principal/user/namespace from the peer SAN, with and without spiffe:// and /ns/", () => {
    const rows: string[][] = [
      // peer SAN, source.principal, source.namespace ("-" = omitted)
      ["spiffe://cluster.local/ns/foo/sa/bar", "cluster.local/ns/foo/sa/bar", "foo"],
      ["cluster.local/ns/foo/sa/bar", "cluster.local/ns/foo/sa/bar", "foo"],
      ["spiffe://example.org/workload", "example.org/workload", "-"],
      ["cluster.local/ns/", "cluster.local/ns/", ""],
    ];
    for (let i = 0; i < rows.length; i++) {
      const r = new RequestView();
      r.peerPrincipal = rows[i][0];
      const bag = derive(r);
      expect(bag.getString("source.principal")).toBe(rows[i][1], rows[i][0]);
      expect(bag.getString("source.user")).toBe(rows[i][1], rows[i][0]);
      if (rows[i][2] == "-") expect(bag.has("source.namespace")).toBe(false, rows[i][0]);
      else expect(bag.getString("source.namespace")).toBe(rows[i][2], rows[i][0]);
    }
  });

  it("derives destination.principal from the local SAN", () => {
    const r = new RequestView();
    r.localPrincipal = "spiffe://cluster.local/ns/shop/sa/petstore";
    expect(derive(r).getString("destination.principal")).toBe("cluster.local/ns/shop/sa/petstore");
  });

  it("adds request.auth.* when the host validated a JWT", () => {
    const r = new RequestView();
    r.authPayload = "{\"iss\":\"i\",\"sub\":\"s\",\"aud\":\"a\"}";
    const bag = derive(r);
    expect(bag.getString("request.auth.principal")).toBe("i/s");
    expect(bag.getString("request.auth.audiences")).toBe("a");
  });
});

describe("addRequestAttributes: order of application", () => {
  it("overwrites values that earlier steps put in the bag", () => {
    const bag = new AttributeBag();
    bag.setString("request.host", "static");
    bag.setString("source.namespace", "forwarded");
    bag.setString("api.service", "static-kept");
    const r = request([":authority", "real"]);
    r.peerPrincipal = "spiffe://cluster.local/ns/peer/sa/x";
    addRequestAttributes(bag, r);
    expect(bag.getString("request.host")).toBe("real");
    expect(bag.getString("source.namespace")).toBe("peer");
    expect(bag.getString("api.service")).toBe("static-kept");
  });

  it("handles a very long path", () => {
    let path = "";
    for (let i = 0; i < 2000; i++) path += "/seg" + i.toString();
    const bag = derive(request([":path", path + "?q=1"]));
    expect(bag.getString("request.url_path")).toBe(path);
    expect(bag.get("request.query_params")!.map!.get("q")).toBe("1");
  });
});

function listing(bag: AttributeBag): string {
  let s = "";
  for (let i = 0; i < bag.size; i++) {
    const v = bag.valueAt(i);
    s += bag.nameAt(i) + "=" + (v.kind == ValueKind.String ? v.str : v.kind.toString()) + ";";
    expect(bag.indexOf(bag.nameAt(i))).toBe(i, "found where it was set");
  }
  return s;
}

function connected(): RequestView {
  const r = request([":authority", "a.example", ":path", "/p?x=1", ":method", "GET", "user-agent", "ua"]);
  r.sourceAddress = "10.0.0.5:41000";
  r.destinationAddress = "10.0.0.9:15006";
  r.peerPrincipal = "spiffe://cluster.local/ns/peer/sa/x";
  return r;
}

describe("addRequestAttributes: appended or set", () => {
  // Over a bag without derived attributes and with room, they are appended
  // without setId's checks; a small bag, or one holding a derived attribute
  // already, takes setId's path. Either way the bag is the same.
  it("lists the static attributes, then the derived ones in their order, with or without room", () => {
    const roomy = new AttributeBag();
    roomy.setString("destination.service", "svc");
    roomy.setString("api.service", "static");
    addRequestAttributes(roomy, connected());
    const small = new AttributeBag(2);
    small.setString("destination.service", "svc");
    small.setString("api.service", "static");
    addRequestAttributes(small, connected());
    expect(listing(small)).toBe(listing(roomy));
    expect(roomy.nameAt(0)).toBe("destination.service");
    expect(roomy.nameAt(2)).toBe("request.headers");
  });

  it("keeps a derived attribute's first place when a static one set it", () => {
    const bag = new AttributeBag();
    bag.setString("api.service", "static");
    bag.setString("request.method", "static");
    addRequestAttributes(bag, connected());
    expect(bag.nameAt(1)).toBe("request.method");
    expect(bag.getString("request.method")).toBe("GET");
    expect(bag.nameAt(2)).toBe("request.headers");
  });
});
