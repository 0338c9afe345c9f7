import {
  CONNECTION_MTLS, CONNECTION_REQUESTED_SERVER_NAME, CONTEXT_PROTOCOL, DESTINATION_IP, DESTINATION_PORT, DESTINATION_PRINCIPAL,
  ORIGIN_IP, REQUEST_HEADERS, REQUEST_HOST, REQUEST_ID, REQUEST_METHOD, REQUEST_PATH, REQUEST_QUERY_PARAMS,
  REQUEST_REFERER, REQUEST_SCHEME, REQUEST_SIZE, REQUEST_TIME, REQUEST_URL_PATH, REQUEST_USERAGENT, SOURCE_IP, SOURCE_NAMESPACE,
  SOURCE_PORT, SOURCE_PRINCIPAL, SOURCE_USER, LAST_DERIVED_ID,
} from "./attributes/names";

// The attributes a request derives, in the order they are set (a bag lists
// its attributes in the order first set, and encoders follow it), then the
// end-user JWT's (auth_claims.ts, in its own order). The derivation works by
// an attribute's place in this order: its switch on a place is a jump table,
// where one on the ids (globals, not constants) would be a chain of compares.
export const enum Place {
  Headers, Host, Method, Path, UrlPath, QueryParams, Referer, Scheme, UserAgent, Id, Size, Time, SourceIp, OriginIp, SourcePort,
  DestinationIp, DestinationPort, Mtls, ServerName, Protocol, SourcePrincipal, SourceUser, SourceNamespace, DestinationPrincipal,
  Count,
}
export const DERIVED_ORDER: StaticArray<i32> = [
  REQUEST_HEADERS, REQUEST_HOST, REQUEST_METHOD, REQUEST_PATH, REQUEST_URL_PATH, REQUEST_QUERY_PARAMS, REQUEST_REFERER,
  REQUEST_SCHEME, REQUEST_USERAGENT, REQUEST_ID, REQUEST_SIZE, REQUEST_TIME, SOURCE_IP, ORIGIN_IP, SOURCE_PORT,
  DESTINATION_IP, DESTINATION_PORT, CONNECTION_MTLS, CONNECTION_REQUESTED_SERVER_NAME, CONTEXT_PROTOCOL,
  SOURCE_PRINCIPAL, SOURCE_USER, SOURCE_NAMESPACE, DESTINATION_PRINCIPAL,
];
// Per derived id, its place in DERIVED_ORDER (-1: a JWT attribute).
export const PLACE_OF_ID: StaticArray<i32> = placesOfIds();

function placesOfIds(): StaticArray<i32> {
  assert(DERIVED_ORDER.length == Place.Count && Place.Count <= 32, "derive: DERIVED_ORDER has one id per place, and its places fit a u32");
  const places = new StaticArray<i32>(LAST_DERIVED_ID + 1);
  for (let id = 0; id <= LAST_DERIVED_ID; id++) places[id] = -1;
  for (let i = 0; i < DERIVED_ORDER.length; i++) places[DERIVED_ORDER[i]] = i;
  return places;
}

// Per connection property, the attributes made of it, as bits of their
// places: a request without the property has none of them.
export const FROM_SOURCE_ADDRESS: u32 = (1 << Place.SourceIp) | (1 << Place.OriginIp) | (1 << Place.SourcePort);
export const FROM_DESTINATION_ADDRESS: u32 = (1 << Place.DestinationIp) | (1 << Place.DestinationPort);
export const FROM_SERVER_NAME: u32 = 1 << Place.ServerName;
export const FROM_PEER_PRINCIPAL: u32 = (1 << Place.SourcePrincipal) | (1 << Place.SourceUser) | (1 << Place.SourceNamespace);
export const FROM_LOCAL_PRINCIPAL: u32 = 1 << Place.DestinationPrincipal;
export const ALL_PLACES: u32 = (1 << Place.Count) - 1;
