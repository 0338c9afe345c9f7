// RequestView built from the header map and the property map the pure
// embedding exports receive (request.ts PROP_*).
import {
  PROP_AUTH_PAYLOAD, PROP_DESTINATION_ADDRESS, PROP_DESTINATION_SERVICE, PROP_LOCAL_PRINCIPAL, PROP_MTLS,
  PROP_PEER_PRINCIPAL, PROP_REQUESTED_SERVER_NAME, PROP_SOURCE_ADDRESS, requestFromMaps, requestWithHeaders, RequestView,
} from "../../assembly/request";
import { StringMap } from "../../assembly/attributes/string_map";

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
