// RequestView built from the header map and the property map the pure
// embedding exports receive (request.ts PROP_*).
import {
  PROP_AUTH_PAYLOAD, PROP_DESTINATION_ADDRESS, PROP_DESTINATION_SERVICE, PROP_LOCAL_PRINCIPAL, PROP_MTLS,
  PROP_PEER_PRINCIPAL, PROP_REQUESTED_SERVER_NAME, PROP_SOURCE_ADDRESS, requestFromMaps, requestFromPairs, requestWithHeaders, RequestView,
} from "../../assembly/request";
import { StringMap } from "../../assembly/attributes/value";
import { encodePairs } from "../../assembly/pairs";

describe("requestFromMaps", () => {
  it("copies every property into the view", () => {
    const h = new StringMap();
    h.set(":path", "/a");
    const p = new StringMap();
    p.set(PROP_SOURCE_ADDRESS, "1.2.3.4:5");
    p.set(PROP_DESTINATION_ADDRESS, "10.0.0.1:8080");
    p.set(PROP_MTLS, "true");
    p.set(PROP_PEER_PRINCIPAL, "spiffe://cluster.local/ns/a/sa/b");
    p.set(PROP_LOCAL_PRINCIPAL, "spiffe://cluster.local/ns/c/sa/d");
    p.set(PROP_REQUESTED_SERVER_NAME, "sni.example");
    p.set(PROP_DESTINATION_SERVICE, "svc.ns.svc.cluster.local");
    p.set(PROP_AUTH_PAYLOAD, "{\"sub\":\"x\"}");
    const r = requestFromMaps(h, p, 123);
    expect(r.header(":path")).toBe("/a");
    expect(r.sourceAddress).toBe("1.2.3.4:5");
    expect(r.destinationAddress).toBe("10.0.0.1:8080");
    expect(r.mtls).toBe(true);
    expect(r.peerPrincipal).toBe("spiffe://cluster.local/ns/a/sa/b");
    expect(r.localPrincipal).toBe("spiffe://cluster.local/ns/c/sa/d");
    expect(r.requestedServerName).toBe("sni.example");
    expect(r.destinationService).toBe("svc.ns.svc.cluster.local");
    expect(r.authPayload).toBe("{\"sub\":\"x\"}");
    expect(r.timeNanos).toBe(123);
  });

  it("defaults absent properties to empty / false", () => {
    const r = requestFromMaps(new StringMap(), new StringMap(), 0);
    expect(r.sourceAddress).toBe("");
    expect(r.mtls).toBe(false);
    expect(r.peerPrincipal).toBe("");
    expect(r.destinationService).toBe("");
    expect(r.authPayload).toBe("");
    expect(r.header(":path")).toBeNull();
  });

  it("treats only the exact text \"true\" as mTLS", () => {
    const rows: string[] = ["false", "TRUE", "1", "yes", ""];
    for (let i = 0; i < rows.length; i++) {
      const p = new StringMap();
      p.set(PROP_MTLS, rows[i]);
      expect(requestFromMaps(new StringMap(), p, 0).mtls).toBe(false, rows[i]);
    }
  });

  it("looks headers up by exact (lower-case) name", () => {
    const r = new RequestView();
    r.headers.set("x-api-key", "k");
    expect(r.header("x-api-key")).toBe("k");
    expect(r.header("X-Api-Key")).toBeNull();
  });
});

describe("requestWithHeaders", () => {
  it("takes the forwarded-attributes header out of the map and keeps it apart", () => {
    const h = new StringMap();
    h.set(":path", "/a");
    h.set("x-mesh-attributes", "CgA=");
    h.set("x-user", "u");
    const r = requestWithHeaders(h);
    expect(r.forwarded).toBe("CgA=");
    expect(r.header("x-mesh-attributes")).toBeNull();
    expect(r.headers.keys).toStrictEqual([":path", "x-user"]);
  });

  it("leaves forwarded null when the header is absent, and keeps an empty one", () => {
    const h = new StringMap();
    h.set(":path", "/a");
    expect(requestWithHeaders(h).forwarded).toBeNull();
    const e = new StringMap();
    e.set("x-mesh-attributes", "");
    const r = requestWithHeaders(e);
    expect(r.forwarded).toBe("");
    expect(r.headers.size).toBe(0);
  });

  it("is how requestFromMaps builds its view", () => {
    const h = new StringMap();
    h.set("x-mesh-attributes", "CgA=");
    const r = requestFromMaps(h, new StringMap(), 0);
    expect(r.forwarded).toBe("CgA=");
    expect(r.headers.has("x-mesh-attributes")).toBe(false);
  });
});

function sameView(a: RequestView, b: RequestView): void {
  expect(a.sourceAddress).toBe(b.sourceAddress);
  expect(a.destinationAddress).toBe(b.destinationAddress);
  expect(a.mtls).toBe(b.mtls);
  expect(a.peerPrincipal).toBe(b.peerPrincipal);
  expect(a.localPrincipal).toBe(b.localPrincipal);
  expect(a.requestedServerName).toBe(b.requestedServerName);
  expect(a.destinationService).toBe(b.destinationService);
  expect(a.authPayload).toBe(b.authPayload);
  expect(a.timeNanos).toBe(b.timeNanos);
}

describe("requestFromPairs", () => {
  it("reads the properties in place into the view requestFromMaps builds, the last of a repeated name winning", () => {
    const keys = [PROP_SOURCE_ADDRESS, "x-unknown", PROP_DESTINATION_ADDRESS, PROP_MTLS, PROP_PEER_PRINCIPAL, PROP_LOCAL_PRINCIPAL,
      PROP_REQUESTED_SERVER_NAME, PROP_DESTINATION_SERVICE, PROP_AUTH_PAYLOAD, PROP_SOURCE_ADDRESS];
    const values = ["1.2.3.4:5", "ignored", "10.0.0.1:8080", "true", "spiffe://cluster.local/ns/a/sa/b", "spiffe://cluster.local/ns/c/sa/d",
      "sni.example", "svc.ns.svc.cluster.local", "{\"sub\":\"é\"}", "5.6.7.8:9"];
    const p = new StringMap();
    for (let i = 0; i < keys.length; i++) p.set(keys[i], values[i]);
    const bytes = encodePairs(keys, values);
    const r = requestFromPairs(new StringMap(), bytes.dataStart, <usize>bytes.length, 7)!;
    sameView(r, requestFromMaps(new StringMap(), p, 7));
    expect(r.sourceAddress).toBe("5.6.7.8:9");
  });

  it("treats only the exact text \"true\" as mTLS, and an empty map as no properties", () => {
    const rows: string[] = ["true", "false", "TRUE", "truex", "tru", ""];
    for (let i = 0; i < rows.length; i++) {
      const bytes = encodePairs([PROP_MTLS], [rows[i]]);
      expect(requestFromPairs(new StringMap(), bytes.dataStart, <usize>bytes.length, 0)!.mtls).toBe(i == 0, rows[i]);
    }
    sameView(requestFromPairs(new StringMap(), 0, 0, 0)!, requestFromMaps(new StringMap(), new StringMap(), 0));
  });

  it("refuses a malformed map", () => {
    const bytes = encodePairs([PROP_SOURCE_ADDRESS], ["1.2.3.4:5"]);
    expect(requestFromPairs(new StringMap(), bytes.dataStart, <usize>bytes.length - 1, 0)).toBeNull();
    expect(requestFromPairs(new StringMap(), bytes.dataStart, 3, 0)).toBeNull();
  });
});
