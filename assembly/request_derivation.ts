import { RequestView } from "./request";
import {
  AddressValues, PrincipalValues, destinationAddressValues, localPrincipalValues, peerPrincipalValues, sourceAddressValues,
} from "./attributes/connection_values";
import { addAuthAttributes } from "./attributes/auth_claims";
import { AttributeBag } from "./attributes/bag";
import { contentLength, isGrpcContentType, methodValue } from "./attributes/header_values";
import { urlPathLength } from "./attributes/query";
import { RequestValues } from "./attributes/request_values";
import { knownSlotOfString } from "./known_strings";
import { AttributeValue } from "./attributes/value";
import { HeaderMap } from "./attributes/header_map";
import { LAST_DERIVED_ID, REQUEST_METHOD } from "./attributes/names";
import {
  ALL_PLACES, DERIVED_ORDER, FROM_DESTINATION_ADDRESS, FROM_LOCAL_PRINCIPAL, FROM_PEER_PRINCIPAL, FROM_SERVER_NAME,
  FROM_SOURCE_ADDRESS, PLACE_OF_ID, Place,
} from "./derived_places";

// The headers the derivation reads, by their known-string slot (header_map.ts).
const AUTHORITY = headerSlot(":authority");
const HOST = headerSlot("host");
const METHOD = headerSlot(":method");
const PATH = headerSlot(":path");
const REFERER = headerSlot("referer");
const SCHEME = headerSlot(":scheme");
const USER_AGENT = headerSlot("user-agent");
const X_REQUEST_ID = headerSlot("x-request-id");
const CONTENT_LENGTH = headerSlot("content-length");
const CONTENT_TYPE = headerSlot("content-type");

function headerSlot(name: string): i32 {
  const slot = knownSlotOfString(name);
  assert(slot >= 0, "derive: a header the derivation reads must be a known string");
  return slot;
}

// Values most requests share, built once (attribute values are never mutated).
const HTTP_TEXT = AttributeValue.ofString("http");
const EMPTY_TEXT = AttributeValue.ofString("");
const GRPC_TEXT = AttributeValue.ofString("grpc");
const NO_SIZE = AttributeValue.ofInt64(0);

// What a derivation is bound to before its first request.
const NO_REQUEST = new RequestView();
const NO_VALUES = new RequestValues();
const NO_HEADERS = new HeaderMap(1);

/**
 * The attributes one request derives for itself (step 5 of the order of
 * application), each found when it is first asked for: a request's quota
 * rules and cached answers read a few by id (`value`), and only a check or
 * report that encodes them all has them all derived (`addTo`). String values
 * are views of the request's header bytes, made in the request's own value
 * storage; the ones requests share come from the tables above.
 *
 * Reused: `reset` binds it to the next request.
 */
export class RequestDerivation {
  private req: RequestView = NO_REQUEST;
  private values: RequestValues = NO_VALUES;
  private headers: HeaderMap = NO_HEADERS;
  // Per derived id: its value, valid while found[id] == stamp (null: the request has none).
  private readonly memo: StaticArray<AttributeValue | null> = new StaticArray<AttributeValue | null>(LAST_DERIVED_ID + 1);
  private readonly found: StaticArray<u32> = new StaticArray<u32>(LAST_DERIVED_ID + 1);
  private stamp: u32 = 1;
  // The places derived for this request (bits of Place), so `addTo` tests a
  // bit instead of loading the id's stamp.
  private derivedPlaces: u32 = 0;
  private pathValue: AttributeValue | null = null;
  private pathRead: bool = false;
  // Where the path's query starts (its length without one); -1 until found.
  private urlLength: isize = -1;
  private source: AddressValues | null = null;
  private destination: AddressValues | null = null;
  private peer: PrincipalValues | null = null;
  private local: PrincipalValues | null = null;
  private readonly auth: AttributeBag = new AttributeBag(8);
  private authRead: bool = false;

  /** Binds to `req`, whose own values are made in `values` (both reset by the caller). */
  // @ts-ignore: decorator
  @inline reset(req: RequestView, values: RequestValues): void {
    this.req = req;
    this.values = values;
    this.headers = req.headerMap();
    if (++this.stamp == 0) {
      // Wrapped around: old stamps could match again.
      const found = this.found;
      for (let i = 0; i < found.length; i++) unchecked((found[i] = 0));
      this.stamp = 1;
    }
    this.derivedPlaces = 0;
    this.pathRead = false;
    this.pathValue = null;
    this.urlLength = -1;
    this.source = null;
    this.destination = null;
    this.peer = null;
    this.local = null;
    this.authRead = false;
  }

  /** The request's header map (its `headers`, or a copy of a map of strings). */
  get headerMap(): HeaderMap {
    return this.headers;
  }

  /** The request's `:method` value (shared for a known method), or null. */
  method(): AttributeValue | null {
    return this.value(REQUEST_METHOD);
  }

  /** The request's `:path` value, or null. */
  // @ts-ignore: decorator
  @inline path(): AttributeValue | null {
    if (!this.pathRead) {
      const at = this.headers.indexOfSlot(PATH);
      this.pathValue = at >= 0 ? this.values.headerEntry(this.headers, at) : null;
      this.pathRead = true;
    }
    return this.pathValue;
  }

  /** The value the request derives for attribute `id`, or null when it derives none (then the earlier steps' value stands). */
  // Inlined: an attribute already derived (or not derived at all) is a load
  // or two where it is asked for; only deriving one is a call.
  // @ts-ignore: decorator
  @inline value(id: i32): AttributeValue | null {
    if (<u32>id > <u32>LAST_DERIVED_ID) return null;
    if (unchecked(this.found[id]) == this.stamp) return unchecked(this.memo[id]);
    return this.derived(id);
  }

  // `value` of an attribute not derived yet for this request.
  private derived(id: i32): AttributeValue | null {
    const place = unchecked(PLACE_OF_ID[id]);
    let v: AttributeValue | null;
    if (place >= 0) {
      v = this.derive(place);
      this.derivedPlaces |= 1 << place;
    } else {
      v = this.authAttributes().getId(id);
    }
    unchecked((this.memo[id] = v));
    unchecked((this.found[id] = this.stamp));
    return v;
  }

  /** Writes every derived attribute into `bag`, over what the earlier steps put there, in the order above. */
  // @ts-ignore: decorator
  @inline addTo(bag: AttributeBag): void {
    // `value` spelled out (derive is inlined here too): a call per attribute saved.
    const memo = this.memo;
    const found = this.found;
    const stamp = this.stamp;
    const derived = this.derivedPlaces;
    // The connection properties the request lacks: their attributes are not looked at.
    const req = this.req;
    let none: u32 = 0;
    if (req.sourceAddress.length == 0) none |= FROM_SOURCE_ADDRESS;
    if (req.destinationAddress.length == 0) none |= FROM_DESTINATION_ADDRESS;
    if (req.requestedServerName.length == 0) none |= FROM_SERVER_NAME;
    if (req.peerPrincipal.length == 0) none |= FROM_PEER_PRINCIPAL;
    if (req.localPrincipal.length == 0) none |= FROM_LOCAL_PRINCIPAL;
    // Over a bag without derived attributes (the static ones rarely are),
    // each is a new entry at the end: appended without setId's checks.
    const fresh = bag.hasRoomFor(Place.Count) && bag.holdsNoIdBelow(LAST_DERIVED_ID + 1);
    const places = ALL_PLACES & ~none;
    // The places left, lowest first (DERIVED_ORDER's order).
    for (let todo = places; todo != 0; todo &= todo - 1) {
      const i = <i32>ctz(todo);
      const id = unchecked(DERIVED_ORDER[i]);
      let v: AttributeValue | null;
      if ((derived & (1 << i)) != 0) {
        v = unchecked(memo[id]);
      } else {
        v = this.derive(i);
        unchecked((memo[id] = v));
        unchecked((found[id] = stamp));
      }
      if (v === null) continue;
      if (fresh) bag.appendFixed(id, v);
      else bag.setId(id, v);
    }
    this.derivedPlaces = derived | places;
    bag.merge(this.authAttributes());
  }

  // The value of the attribute at `place`. Inlined into `value` and `addTo`: a call per attribute saved.
  // The attributes that are a header's value share one lookup (a view of the
  // header's bytes), spelled once after the first switch, not once per
  // attribute: the code each copy of `derive` takes up is what a request on a
  // cold core fetches.
  // @ts-ignore: decorator
  @inline private derive(place: i32): AttributeValue | null {
    const h = this.headers;
    const values = this.values;
    const req = this.req;
    let slot = -1;
    switch (place) {
      // The request's own map: the forwarded-attributes header was already
      // taken out of it (requestWithHeaders), so no copy is needed.
      case Place.Headers:
        return h.size > 0 ? values.map(h) : null;
      case Place.Host:
        slot = h.indexOfSlot(AUTHORITY) >= 0 ? AUTHORITY : HOST;
        break;
      case Place.Method:
        slot = METHOD;
        break;
      case Place.Path: {
        const path = this.path();
        return path !== null ? path : EMPTY_TEXT;
      }
      // Without a query the URL path is the path itself: one value for both.
      // With one, the path's valid UTF-8 up to its `?` (ASCII) is valid too.
      case Place.UrlPath: {
        const path = this.path();
        if (path === null) return null;
        const len = path.textLen();
        const urlLength = this.urlPathEnd(path);
        return urlLength == len ? path : values.prefixView(path, urlLength);
      }
      case Place.QueryParams: {
        const path = this.path();
        if (path === null) return null;
        const ptr = path.textPtr();
        const len = path.textLen();
        return this.urlPathEnd(path) < len && values.query.parse(ptr, len) ? values.map(values.query) : null;
      }
      case Place.Referer:
        slot = REFERER;
        break;
      case Place.Scheme:
        slot = SCHEME;
        break;
      case Place.UserAgent:
        slot = USER_AGENT;
        break;
      case Place.Id:
        slot = X_REQUEST_ID;
        break;
      case Place.Size:
        slot = CONTENT_LENGTH;
        break;
      case Place.Time:
        return values.timestampNanos(req.timeNanos);
      case Place.SourceIp:
      case Place.OriginIp:
      case Place.SourcePort: {
        const addr = this.sourceAddress();
        return addr === null ? null : place == Place.SourcePort ? addr.port : addr.ip;
      }
      case Place.DestinationIp:
      case Place.DestinationPort: {
        const addr = this.destinationAddress();
        return addr === null ? null : place == Place.DestinationPort ? addr.port : addr.ip;
      }
      case Place.Mtls:
        return AttributeValue.ofBool(req.mtls);
      case Place.ServerName:
        return req.requestedServerName.length > 0 ? values.string(req.requestedServerName) : null;
      case Place.Protocol:
        slot = CONTENT_TYPE;
        break;
      case Place.SourcePrincipal:
      case Place.SourceUser:
      case Place.SourceNamespace: {
        const peer = this.peerPrincipal();
        return peer === null ? null : place == Place.SourceNamespace ? peer.namespace : peer.principal;
      }
      case Place.DestinationPrincipal: {
        const local = this.localPrincipal();
        return local !== null ? local.principal : null;
      }
      default:
        return null;
    }
    // A header's value, then what the attribute makes of it.
    const value = this.header(slot);
    switch (place) {
      case Place.Host:
        return value !== null ? value : EMPTY_TEXT;
      case Place.Method:
        return value !== null ? methodValue(value) : null;
      case Place.Scheme:
        return value !== null ? value : HTTP_TEXT;
      // At check time the body has not been read: the size the client announced.
      case Place.Size: {
        const size = value !== null ? contentLength(value) : 0;
        return size > 0 ? values.int64(size) : NO_SIZE;
      }
      case Place.Protocol:
        return value !== null && isGrpcContentType(value) ? GRPC_TEXT : HTTP_TEXT;
    }
    return value;
  }

  // The length of the path's URL path (before its query): both attributes
  // made of the path ask, and it is found once per request.
  // @ts-ignore: decorator
  @inline private urlPathEnd(path: AttributeValue): usize {
    let n = this.urlLength;
    if (n < 0) {
      n = <isize>urlPathLength(path.textPtr(), path.textLen());
      this.urlLength = n;
    }
    return <usize>n;
  }

  // The value of the header in known-string slot `slot`, or null.
  // @ts-ignore: decorator
  @inline private header(slot: i32): AttributeValue | null {
    const at = this.headers.indexOfSlot(slot);
    return at >= 0 ? this.values.headerEntry(this.headers, at) : null;
  }

  // @ts-ignore: decorator
  @inline private sourceAddress(): AddressValues | null {
    const text = this.req.sourceAddress;
    if (text.length == 0) return null;
    let addr = this.source;
    if (addr === null) {
      addr = sourceAddressValues(text);
      this.source = addr;
    }
    return addr;
  }

  // @ts-ignore: decorator
  @inline private destinationAddress(): AddressValues | null {
    const text = this.req.destinationAddress;
    if (text.length == 0) return null;
    let addr = this.destination;
    if (addr === null) {
      addr = destinationAddressValues(text);
      this.destination = addr;
    }
    return addr;
  }

  // @ts-ignore: decorator
  @inline private peerPrincipal(): PrincipalValues | null {
    const san = this.req.peerPrincipal;
    if (san.length == 0) return null;
    let peer = this.peer;
    if (peer === null) {
      peer = peerPrincipalValues(san);
      this.peer = peer;
    }
    return peer;
  }

  // @ts-ignore: decorator
  @inline private localPrincipal(): PrincipalValues | null {
    const san = this.req.localPrincipal;
    if (san.length == 0) return null;
    let local = this.local;
    if (local === null) {
      local = localPrincipalValues(san);
      this.local = local;
    }
    return local;
  }

  // The request.auth.* attributes of the request's JWT payload, read once.
  // Inlined: most requests have no payload, and then no call is made.
  // @ts-ignore: decorator
  @inline private authAttributes(): AttributeBag {
    const auth = this.auth;
    if (!this.authRead) {
      if (auth.size > 0) auth.clear();
      const payload = this.req.authPayload;
      if (payload.length > 0) addAuthAttributes(auth, payload);
      this.authRead = true;
    }
    return auth;
  }
}

/**
 * Step 5 of the order of application: the attributes derived from the request
 * itself (RequestDerivation), all written over whatever the static and
 * forwarded steps put in `bag`. The request's own values are made in
 * `values` (its evaluation's reused storage).
 */
export function addRequestAttributes(bag: AttributeBag, req: RequestView, values: RequestValues = new RequestValues()): void {
  const derivation = new RequestDerivation();
  derivation.reset(req, values);
  derivation.addTo(bag);
}
