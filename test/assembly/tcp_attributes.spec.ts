// Check-time attributes of a TCP connection (hub-client §7; upstream
// src/istio/control/tcp/attributes_builder.cc ExtractCheckAttributes).
import { AttributeBag } from "../../assembly/attributes/bag";
import { addConnectionAttributes, ConnectionView } from "../../assembly/attributes/tcp_attributes";
import { ValueKind } from "../../assembly/attributes/value";

function view(): ConnectionView {
  const v = new ConnectionView();
  v.sourceAddress = "10.0.0.5:41000";
  v.destinationAddress = "[fd00::9]:5432";
  v.mtls = true;
  v.peerPrincipal = "spiffe://cluster.local/ns/web/sa/frontend";
  v.localPrincipal = "spiffe://cluster.local/ns/db/sa/postgres";
  v.requestedServerName = "db.shop";
  v.connectionId = "tcp-1-abc-7";
  v.timeNanos = 1_700_000_000_000_000_123;
  return v;
}

describe("addConnectionAttributes", () => {
  it("derives source, destination, connection and context attributes", () => {
    const bag = new AttributeBag();
    addConnectionAttributes(bag, view());
    const ip = bag.get("source.ip")!.bytes!;
    expect(ip.length).toBe(4);
    expect(ip[0]).toBe(10);
    expect(ip[3]).toBe(5);
    expect(bag.get("origin.ip")!.bytes!.length).toBe(4);
    expect(bag.get("source.port")!.int).toBe(41000);
    expect(bag.getString("source.principal")).toBe("cluster.local/ns/web/sa/frontend");
    expect(bag.getString("source.user")).toBe("cluster.local/ns/web/sa/frontend");
    expect(bag.getString("source.namespace")).toBe("web");
    expect(bag.getString("destination.principal")).toBe("cluster.local/ns/db/sa/postgres");
    const dip = bag.get("destination.ip")!.bytes!;
    expect(dip.length).toBe(16);
    expect(dip[0]).toBe(0xfd);
    expect(dip[15]).toBe(9);
    expect(bag.get("destination.port")!.int).toBe(5432);
    expect(bag.get("connection.mtls")!.bool).toBe(true);
    expect(bag.getString("connection.requested_server_name")).toBe("db.shop");
    expect(bag.getString("connection.id")).toBe("tcp-1-abc-7");
    expect(bag.getString("context.protocol")).toBe("tcp");
    const time = bag.get("context.time")!;
    expect(time.kind).toBe(ValueKind.Timestamp);
    expect(time.int).toBe(1_700_000_000);
    expect(time.nanos).toBe(123);
  });

  it("writes over static attributes of the same name", () => {
    const bag = new AttributeBag();
    bag.setString("context.protocol", "static");
    bag.setString("destination.uid", "kubernetes://db-0.shop");
    addConnectionAttributes(bag, view());
    expect(bag.getString("context.protocol")).toBe("tcp");
    expect(bag.getString("destination.uid")).toBe("kubernetes://db-0.shop");
    expect(bag.names[0]).toBe("context.protocol", "static names keep their place");
  });

  it("omits what the proxy does not know; connection.mtls is always set", () => {
    const bag = new AttributeBag();
    addConnectionAttributes(bag, new ConnectionView());
    expect(bag.has("source.ip")).toBe(false);
    expect(bag.has("origin.ip")).toBe(false);
    expect(bag.has("source.principal")).toBe(false);
    expect(bag.has("destination.ip")).toBe(false);
    expect(bag.has("connection.requested_server_name")).toBe(false);
    expect(bag.has("connection.id")).toBe(false);
    expect(bag.get("connection.mtls")!.bool).toBe(false);
    expect(bag.getString("context.protocol")).toBe("tcp");
  });

  it("keeps a non-SPIFFE peer identity as is and sets no namespace without /ns/", () => {
    const v = new ConnectionView();
    v.peerPrincipal = "db-client.example.com";
    const bag = new AttributeBag();
    addConnectionAttributes(bag, v);
    expect(bag.getString("source.principal")).toBe("db-client.example.com");
    expect(bag.has("source.namespace")).toBe(false);
  });
});
