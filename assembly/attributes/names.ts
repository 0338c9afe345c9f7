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
// ids fixed at compile time: constants, so a bag's set or lookup of one is a
// load or store at a fixed offset, with no bounds check (every bag's
// position table has room for FIXED_ID_COUNT ids) and no global read. They
// are interned first, in this order (checked at start).
export const REQUEST_HEADERS: i32 = 0;
export const REQUEST_HOST: i32 = 1;
export const REQUEST_METHOD: i32 = 2;
export const REQUEST_PATH: i32 = 3;
export const REQUEST_URL_PATH: i32 = 4;
export const REQUEST_QUERY_PARAMS: i32 = 5;
export const REQUEST_REFERER: i32 = 6;
export const REQUEST_SCHEME: i32 = 7;
export const REQUEST_USERAGENT: i32 = 8;
export const REQUEST_ID: i32 = 9;
export const REQUEST_SIZE: i32 = 10;
export const REQUEST_TIME: i32 = 11;
export const REQUEST_API_KEY: i32 = 12;
export const SOURCE_IP: i32 = 13;
export const SOURCE_PORT: i32 = 14;
export const ORIGIN_IP: i32 = 15;
export const DESTINATION_IP: i32 = 16;
export const DESTINATION_PORT: i32 = 17;
export const CONNECTION_MTLS: i32 = 18;
export const CONNECTION_REQUESTED_SERVER_NAME: i32 = 19;
export const CONTEXT_PROTOCOL: i32 = 20;
export const SOURCE_PRINCIPAL: i32 = 21;
export const SOURCE_USER: i32 = 22;
export const SOURCE_NAMESPACE: i32 = 23;
export const DESTINATION_PRINCIPAL: i32 = 24;
// From the end-user JWT's payload (auth_claims.ts).
export const REQUEST_AUTH_PRINCIPAL: i32 = 25;
export const REQUEST_AUTH_AUDIENCES: i32 = 26;
export const REQUEST_AUTH_PRESENTER: i32 = 27;
export const REQUEST_AUTH_CLAIMS: i32 = 28;
export const REQUEST_AUTH_RAW_CLAIMS: i32 = 29;
/** Every attribute derived from a request has an id from 0 to this (request_derivation.ts). */
export const LAST_DERIVED_ID: i32 = REQUEST_AUTH_RAW_CLAIMS;
// Report-time attributes (report.ts).
export const RESPONSE_HEADERS: i32 = 30;
export const RESPONSE_TIME: i32 = 31;
export const RESPONSE_SIZE: i32 = 32;
export const RESPONSE_CODE: i32 = 33;
export const RESPONSE_DURATION: i32 = 34;
export const RESPONSE_GRPC_STATUS: i32 = 35;
export const RESPONSE_GRPC_MESSAGE: i32 = 36;
export const REQUEST_TOTAL_SIZE: i32 = 37;
export const RESPONSE_TOTAL_SIZE: i32 = 38;
export const CHECK_ERROR_CODE: i32 = 39;
export const CHECK_ERROR_MESSAGE: i32 = 40;
export const CHECK_CACHE_HIT: i32 = 41;
export const QUOTA_CACHE_HIT: i32 = 42;

/** Ids below this are the fixed ones above: every bag has room for them. */
export const FIXED_ID_COUNT: i32 = 43;

const FIXED_NAMES: StaticArray<string> = [
  "request.headers",
  "request.host",
  "request.method",
  "request.path",
  "request.url_path",
  "request.query_params",
  "request.referer",
  "request.scheme",
  "request.useragent",
  "request.id",
  "request.size",
  "request.time",
  "request.api_key",
  "source.ip",
  "source.port",
  "origin.ip",
  "destination.ip",
  "destination.port",
  "connection.mtls",
  "connection.requested_server_name",
  "context.protocol",
  "source.principal",
  "source.user",
  "source.namespace",
  "destination.principal",
  "request.auth.principal",
  "request.auth.audiences",
  "request.auth.presenter",
  "request.auth.claims",
  "request.auth.raw_claims",
  "response.headers",
  "response.time",
  "response.size",
  "response.code",
  "response.duration",
  "response.grpc_status",
  "response.grpc_message",
  "request.total_size",
  "response.total_size",
  "check.error_code",
  "check.error_message",
  "check.cache_hit",
  "quota.cache_hit",
];
for (let id = 0; id < FIXED_ID_COUNT; id++) {
  assert(internAttribute(unchecked(FIXED_NAMES[id])) == id, "names: the fixed attributes are interned first, in order");
}
