import { JsonKind, JsonValue, parseJson } from "../json";
import { AttributeValue, StringMap } from "./value";
import { AttributeBag } from "./bag";
import { REQUEST_AUTH_AUDIENCES, REQUEST_AUTH_CLAIMS, REQUEST_AUTH_PRESENTER, REQUEST_AUTH_PRINCIPAL, REQUEST_AUTH_RAW_CLAIMS } from "./names";

// `request.auth.*` attributes from the payload of a JWT the host has already
// verified, derived as the upstream authentication filter did: every claim
// becomes a string list (a JSON string is split on spaces, an array keeps its
// strings, other kinds are dropped).

function claimList(v: JsonValue): Array<string> {
  const out = new Array<string>();
  if (v.kind == JsonKind.String) {
    const parts = v.str.split(" ");
    for (let i = 0; i < parts.length; i++) if (parts[i].length > 0) out.push(parts[i]);
  } else if (v.kind == JsonKind.Array) {
    for (let i = 0; i < v.items.length; i++) {
      if (v.items[i].kind == JsonKind.String) out.push(v.items[i].str);
    }
  }
  return out;
}

function first(payload: JsonValue, name: string): string | null {
  const v = payload.get(name);
  if (v === null) return null;
  const list = claimList(v);
  return list.length > 0 ? list[0] : null;
}

/** Adds request.auth.{principal,audiences,presenter,claims,raw_claims}; ignores a payload that is not a JSON object. */
export function addAuthAttributes(bag: AttributeBag, payloadJson: string): void {
  if (payloadJson.length == 0) return;
  const parsed = parseJson(payloadJson);
  if (parsed.value === null) return;
  const payload = parsed.value as JsonValue;
  if (payload.kind != JsonKind.Object) return;
  const iss = first(payload, "iss");
  const sub = first(payload, "sub");
  if (iss !== null && sub !== null) bag.setIdString(REQUEST_AUTH_PRINCIPAL, iss + "/" + sub);
  const aud = first(payload, "aud");
  if (aud !== null) bag.setIdString(REQUEST_AUTH_AUDIENCES, aud);
  const azp = first(payload, "azp");
  if (azp !== null) bag.setIdString(REQUEST_AUTH_PRESENTER, azp);
  const claims = new StringMap();
  for (let i = 0; i < payload.keys.length; i++) {
    const list = claimList(payload.values[i]);
    if (list.length > 0) claims.set(payload.keys[i], list.join(","));
  }
  if (claims.size > 0) bag.setId(REQUEST_AUTH_CLAIMS, AttributeValue.ofMap(claims));
  bag.setIdString(REQUEST_AUTH_RAW_CLAIMS, payloadJson);
}
