import { addRequestAttributes } from "./attributes/derive";
import { AttributeBag } from "./attributes/bag";
import { AttributeValue } from "./attributes/value";
import { RequestValues } from "./attributes/request_values";
import { REQUEST_API_KEY } from "./attributes/names";
import { readForwardedAttributes } from "./attributes/forwarded";
import { apiKeyInto, DEFAULT_API_KEY_LOCATIONS } from "./api_key";
import { ApiMatch, NO_API_MATCH } from "./api_spec";
import { ClientConfig, ServiceConfig } from "./config/client_config";
import { QuotaCharge, quotaCharges } from "./quota";
import { RequestView } from "./request";

/** Everything the hub client decides about a request before calling the hub. */
export class Evaluation {
  /** The check-time attribute bag. */
  attributes: AttributeBag = new AttributeBag();
  /** Null when neither the destination service nor the default has a ServiceConfig. */
  service: ServiceConfig | null = null;
  api: ApiMatch = NO_API_MATCH;
  /** The winning pattern's uriTemplate or regex, "" if none matched. */
  apiPattern: string = "";
  /** The API key (`request.api_key`), a view of the request's bytes; null when none was found. */
  apiKeyValue: AttributeValue | null = null;
  quotas: Array<QuotaCharge> = [];
  /** Value for the outgoing forwarded-attributes header; "" means send none. */
  forwardHeader: string = "";
  /** Forwarded attributes dropped as unusable (ForwardedAttributes.dropped). */
  forwardedDropped: i32 = 0;
  /** Storage of the values only this request has, reused by the next evaluation. */
  readonly values: RequestValues = new RequestValues();
  /** Storage of `api` when a pattern matched, reused likewise. */
  readonly matchedApi: ApiMatch = new ApiMatch();

  /** The API key's text, null when none was found. */
  get apiKey(): string | null {
    const key = this.apiKeyValue;
    return key !== null ? key.str : null;
  }

  /** Back to a fresh evaluation, keeping the bag's and quota list's storage. */
  reset(): void {
    this.attributes.clear();
    this.service = null;
    this.api = NO_API_MATCH;
    this.apiPattern = "";
    this.apiKeyValue = null;
    this.quotas.length = 0;
    this.forwardHeader = "";
    this.forwardedDropped = 0;
    this.values.reset();
  }
}

/**
 * The hub client's per-request logic. Attributes are applied in the spec's
 * order, later steps replacing earlier values: (1) static hub attributes of the
 * filter, (2) of the route/service, (3–4) attributes forwarded by the source
 * proxy (read from FORWARDED_HEADER unless ignored; only allow-listed names),
 * (5) attributes derived from the request, including API attributes and
 * `request.api_key`. Quotas are then matched on the final bag.
 *
 * `into`, when given, is an evaluation no one holds any more: it is reset and
 * filled, so its bag and lists are reused instead of allocated.
 */
export function evaluateRequest(config: ClientConfig, req: RequestView, wantBindings: bool, into: Evaluation | null = null): Evaluation {
  let e: Evaluation;
  if (into !== null) {
    e = into;
    e.reset();
  } else {
    e = new Evaluation();
  }
  const service = config.serviceFor(req.destinationService);
  e.service = service;
  const bag = e.attributes;

  bag.merge(config.hubAttributes);
  if (service !== null) bag.merge(service.hubAttributes);
  if (!config.ignoreForwardedAttributes && req.forwarded !== null) {
    const forwarded = readForwardedAttributes(req.forwarded);
    bag.merge(forwarded.bag);
    e.forwardedDropped = forwarded.dropped;
  }
  addRequestAttributes(bag, req, e.values);

  if (service !== null) {
    // Read in place from the request's bytes, as addRequestAttributes found them.
    const values = e.values;
    const method = values.method;
    const path = values.path;
    const spec = service.apiSpec;
    if (method !== null && path !== null && !spec.isEmpty) {
      e.api = spec.applyValue(method.str, path, bag, wantBindings, e.matchedApi);
      if (e.api.matched) e.apiPattern = spec.patterns[e.api.winner].text;
    }
    // Upstream looked for a key whenever a ServiceConfig existed, so the
    // default locations apply even to services without API specs.
    const key = values.spare();
    if (apiKeyInto(spec.apiKeys.length > 0 ? spec.apiKeys : DEFAULT_API_KEY_LOCATIONS, values.headers!, path, key, values.spare())) {
      e.apiKeyValue = key;
      bag.setId(REQUEST_API_KEY, key);
    }
    quotaCharges(service.quotaRules, bag, e.quotas);
  }

  e.forwardHeader = service !== null ? service.forwardHeader : config.forwardHeader;
  return e;
}
