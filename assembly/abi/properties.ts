import { propertyPath } from "./marshal";

// The property paths the module reads, each encoded once at start (segments
// joined by NUL bytes, as hosts expect): a read per request then costs the
// host call alone, with no path to build.

export const SOURCE_ADDRESS = propertyPath(["source", "address"]);
export const DESTINATION_ADDRESS = propertyPath(["destination", "address"]);
export const CONNECTION_MTLS = propertyPath(["connection", "mtls"]);
export const PEER_URI_SAN = propertyPath(["connection", "uri_san_peer_certificate"]);
export const LOCAL_URI_SAN = propertyPath(["connection", "uri_san_local_certificate"]);
export const REQUESTED_SERVER_NAME = propertyPath(["connection", "requested_server_name"]);
export const MESH_DESTINATION_SERVICE = propertyPath(["mesh", "destination_service"]);
export const MESH_AUTHN_PAYLOAD = propertyPath(["mesh", "authn_payload"]);
export const UPSTREAM_ADDRESS = propertyPath(["upstream", "address"]);
export const RESPONSE_CODE = propertyPath(["response", "code"]);
export const REQUEST_SIZE = propertyPath(["request", "size"]);
export const RESPONSE_SIZE = propertyPath(["response", "size"]);
export const REQUEST_TOTAL_SIZE = propertyPath(["request", "total_size"]);
export const RESPONSE_TOTAL_SIZE = propertyPath(["response", "total_size"]);
/** Set by a host that executes the NetworkFailPolicy's retries itself (see proxy/plugin.ts, HOST_RETRIES_PROPERTY). */
export const MESH_HOST_RETRIES = propertyPath(["mesh", "host_retries"]);
