// Attribute names interned to small integer ids. A bag finds an attribute by
// its id in one indexed load, so the hot path never compares name strings:
// the names the module derives have their ids fixed at start (below), and
// the names a configuration mentions (static attributes, API-spec patterns,
// quota clauses, the hub's referenced attributes) are interned when it is
// compiled or decoded. Names read from the wire (a forwarded-attributes
// header) are only looked up, never interned, and the registry has a
// ceiling: a client cannot make it grow. A name without an id still works
// in a bag, found by a string compare (see AttributeBag).

/** Id of a name the registry does not hold. */
export const NO_ATTRIBUTE_ID: i32 = -1;

// Far above the ~60 well-known attributes plus a large configuration's own.
const MAX_INTERNED: i32 = 4096;
const MAX_INTERNED_NAME_LENGTH: i32 = 256;

const idsByName = new Map<string, i32>();
let namesById = new StaticArray<string>(64);
let interned: i32 = 0;

/** The name's id, interning it if it has none (NO_ATTRIBUTE_ID past the ceiling). */
export function internAttribute(name: string): i32 {
  if (idsByName.has(name)) return idsByName.get(name);
  const id = interned;
  if (id >= MAX_INTERNED || name.length > MAX_INTERNED_NAME_LENGTH) return NO_ATTRIBUTE_ID;
  if (id == namesById.length) {
    const grown = new StaticArray<string>(id << 1);
    for (let i = 0; i < id; i++) unchecked((grown[i] = namesById[i]));
    namesById = grown;
  }
  unchecked((namesById[id] = name));
  interned = id + 1;
  idsByName.set(name, id);
  return id;
}

/** The name's id, or NO_ATTRIBUTE_ID if it was never interned. */
export function attributeId(name: string): i32 {
  return idsByName.has(name) ? idsByName.get(name) : NO_ATTRIBUTE_ID;
}

/** The interned name of `id` (0 <= id < internedAttributeCount()). */
export function attributeName(id: i32): string {
  return unchecked(namesById[id]);
}

/** Ids handed out so far (ids run from 0 to this less one). */
export function internedAttributeCount(): i32 {
  return interned;
}

// The attributes the module derives from a request and its response, with
// ids fixed at start.
export const REQUEST_HEADERS = internAttribute("request.headers");
export const REQUEST_HOST = internAttribute("request.host");
export const REQUEST_METHOD = internAttribute("request.method");
export const REQUEST_PATH = internAttribute("request.path");
export const REQUEST_URL_PATH = internAttribute("request.url_path");
export const REQUEST_QUERY_PARAMS = internAttribute("request.query_params");
export const REQUEST_REFERER = internAttribute("request.referer");
export const REQUEST_SCHEME = internAttribute("request.scheme");
export const REQUEST_USERAGENT = internAttribute("request.useragent");
export const REQUEST_ID = internAttribute("request.id");
export const REQUEST_SIZE = internAttribute("request.size");
export const REQUEST_TIME = internAttribute("request.time");
export const REQUEST_API_KEY = internAttribute("request.api_key");
export const SOURCE_IP = internAttribute("source.ip");
export const SOURCE_PORT = internAttribute("source.port");
export const ORIGIN_IP = internAttribute("origin.ip");
export const DESTINATION_IP = internAttribute("destination.ip");
export const DESTINATION_PORT = internAttribute("destination.port");
export const CONNECTION_MTLS = internAttribute("connection.mtls");
export const CONNECTION_REQUESTED_SERVER_NAME = internAttribute("connection.requested_server_name");
export const CONTEXT_PROTOCOL = internAttribute("context.protocol");
export const SOURCE_PRINCIPAL = internAttribute("source.principal");
export const SOURCE_USER = internAttribute("source.user");
export const SOURCE_NAMESPACE = internAttribute("source.namespace");
export const DESTINATION_PRINCIPAL = internAttribute("destination.principal");
// From the end-user JWT's payload (auth_claims.ts).
export const REQUEST_AUTH_PRINCIPAL = internAttribute("request.auth.principal");
export const REQUEST_AUTH_AUDIENCES = internAttribute("request.auth.audiences");
export const REQUEST_AUTH_PRESENTER = internAttribute("request.auth.presenter");
export const REQUEST_AUTH_CLAIMS = internAttribute("request.auth.claims");
export const REQUEST_AUTH_RAW_CLAIMS = internAttribute("request.auth.raw_claims");
/** Every attribute derived from a request has an id from 0 to this (request_derivation.ts). */
export const LAST_DERIVED_ID = REQUEST_AUTH_RAW_CLAIMS;
// Report-time attributes (report.ts).
export const RESPONSE_HEADERS = internAttribute("response.headers");
export const RESPONSE_TIME = internAttribute("response.time");
export const RESPONSE_SIZE = internAttribute("response.size");
export const RESPONSE_CODE = internAttribute("response.code");
export const RESPONSE_DURATION = internAttribute("response.duration");
export const RESPONSE_GRPC_STATUS = internAttribute("response.grpc_status");
export const RESPONSE_GRPC_MESSAGE = internAttribute("response.grpc_message");
export const REQUEST_TOTAL_SIZE = internAttribute("request.total_size");
export const RESPONSE_TOTAL_SIZE = internAttribute("response.total_size");
export const CHECK_ERROR_CODE = internAttribute("check.error_code");
export const CHECK_ERROR_MESSAGE = internAttribute("check.error_message");
export const CHECK_CACHE_HIT = internAttribute("check.cache_hit");
export const QUOTA_CACHE_HIT = internAttribute("quota.cache_hit");
