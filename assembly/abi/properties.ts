import { propertyPath } from "./marshal";

// The property paths the module reads one at a time, each encoded once at
// start (segments joined by NUL bytes, as hosts expect): a read then costs the
// host call alone, with no path to build. An HTTP stream's properties are
// read as sets (stream_properties.ts).

export const SOURCE_ADDRESS = propertyPath(["source", "address"]);
export const DESTINATION_ADDRESS = propertyPath(["destination", "address"]);
export const CONNECTION_MTLS = propertyPath(["connection", "mtls"]);
export const PEER_URI_SAN = propertyPath(["connection", "uri_san_peer_certificate"]);
export const LOCAL_URI_SAN = propertyPath(["connection", "uri_san_local_certificate"]);
export const REQUESTED_SERVER_NAME = propertyPath(["connection", "requested_server_name"]);
export const UPSTREAM_ADDRESS = propertyPath(["upstream", "address"]);
/** Set by a host that executes the NetworkFailPolicy's retries itself (see proxy/plugin.ts, HOST_RETRIES_PROPERTY). */
export const MESH_HOST_RETRIES = propertyPath(["mesh", "host_retries"]);
