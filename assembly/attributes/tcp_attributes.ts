import { parseSocketAddress } from "./address";
import { AttributeBag } from "./bag";
import { namespaceOfPrincipal, principalFromSan } from "./principal";
import { AttributeValue } from "./value";

/** What the proxy knows about a TCP connection when it is accepted. */
export class ConnectionView {
  /** Downstream peer `ip:port` (`source.address`), "" when unknown. */
  sourceAddress: string = "";
  /** Local address the client connected to (`destination.address`). */
  destinationAddress: string = "";
  mtls: bool = false;
  /** Peer certificate URI SAN (`connection.uri_san_peer_certificate`). */
  peerPrincipal: string = "";
  /** Local certificate URI SAN. */
  localPrincipal: string = "";
  requestedServerName: string = "";
  /** `<prefix drawn per configuration>-<context id>`. */
  connectionId: string = "";
  timeNanos: i64 = 0;
}

/**
 * The check-time attributes of a TCP connection (hub-client.md §7), written
 * over the static hub attributes already in `bag`: source.ip and origin.ip
 * (address bytes) and source.port; source.principal = source.user = the peer
 * SAN without `spiffe://`, source.namespace from it (TCP has no authn
 * filter); destination.principal, destination.ip/port; connection.mtls,
 * connection.requested_server_name, connection.id; context.time;
 * context.protocol = "tcp".
 */
export function addConnectionAttributes(bag: AttributeBag, c: ConnectionView): void {
  if (c.sourceAddress.length > 0) {
    const source = parseSocketAddress(c.sourceAddress);
    if (source.ip !== null) {
      bag.set("source.ip", AttributeValue.ofBytes(source.ip as Uint8Array));
      bag.set("origin.ip", AttributeValue.ofBytes(source.ip as Uint8Array));
    }
    if (source.port >= 0) bag.set("source.port", AttributeValue.ofInt64(source.port));
  }
  if (c.peerPrincipal.length > 0) {
    const peer = principalFromSan(c.peerPrincipal);
    bag.setString("source.principal", peer);
    bag.setString("source.user", peer);
    const ns = namespaceOfPrincipal(peer);
    if (ns !== null) bag.setString("source.namespace", ns);
  }
  if (c.localPrincipal.length > 0) bag.setString("destination.principal", principalFromSan(c.localPrincipal));
  if (c.destinationAddress.length > 0) {
    const destination = parseSocketAddress(c.destinationAddress);
    if (destination.ip !== null) bag.set("destination.ip", AttributeValue.ofBytes(destination.ip as Uint8Array));
    if (destination.port >= 0) bag.set("destination.port", AttributeValue.ofInt64(destination.port));
  }
  bag.set("connection.mtls", AttributeValue.ofBool(c.mtls));
  if (c.requestedServerName.length > 0) bag.setString("connection.requested_server_name", c.requestedServerName);
  bag.set("context.time", AttributeValue.ofTimestampNanos(c.timeNanos));
  bag.setString("context.protocol", "tcp");
  if (c.connectionId.length > 0) bag.setString("connection.id", c.connectionId);
}
