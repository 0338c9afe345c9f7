import { RequestAttributes } from "./request_attributes";
import { AttributeBag } from "./attributes/bag";
import { AttributeValue } from "./attributes/value";
import { RequestValues } from "./attributes/request_values";
import { REQUEST_API_KEY } from "./attributes/names";
import { readForwardedAttributes } from "./proto/forwarded";
import { apiKeyInto, DEFAULT_API_KEY_LOCATIONS } from "./api_key";
import { ApiMatch, NO_API_MATCH } from "./api_spec";
import { ClientConfig, ServiceConfig } from "./config/client_config";
import { QuotaCharge, replaceQuotaCharges } from "./quota";
import { RequestView } from "./request";
import { isNullString } from "./text";

/** Everything the hub client decides about a request before calling the hub. */
export class Evaluation {
  /**
   * The check-time attributes, looked up by id through their layers (static
   * and forwarded, the request's own, API): what the caches and quota rules
   * read. `attributes` is the same as one bag.
   */
  readonly view: RequestAttributes = new RequestAttributes();
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
  /** Storage of the static and forwarded attributes, when a request forwards some. */
  readonly forwardedEarly: AttributeBag = new AttributeBag();

  /** The check-time attribute bag (built from `view` when first read: encoders and reports read it). */
  get attributes(): AttributeBag {
    return this.view.asBag();
  }

  /** The API key's text, null when none was found. */
  get apiKey(): string | null {
    const key = this.apiKeyValue;
    return key !== null ? key.str : null;
  }

  /** Back to a fresh evaluation of `req`, keeping the storage of its attributes and lists. */
  // @ts-ignore: decorator
  @inline reset(req: RequestView): void {
    this.values.reset();
    this.view.reset(req, this.values);
    this.service = null;
    this.api = NO_API_MATCH;
    this.apiPattern = "";
    this.apiKeyValue = null;
    // `quotas` is rewritten by the evaluation (evaluateRequest).
    this.forwardHeader = "";
    this.forwardedDropped = 0;
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
  const e = into !== null ? into : new Evaluation();
  e.reset(req);
  const service = config.serviceFor(req.destinationService);
  e.service = service;
  const view = e.view;

  view.early = config.staticAttributesFor(service);
  if (!config.ignoreForwardedAttributes && !isNullString(req.forwarded)) {
    const forwarded = readForwardedAttributes(req.forwarded);
    const early = e.forwardedEarly;
    early.clear();
    early.merge(view.early);
    early.merge(forwarded.bag);
    view.early = early;
    e.forwardedDropped = forwarded.dropped;
  }
  // The request's own attributes are derived when first read (view.derivation).

  if (service !== null) {
    const derivation = view.derivation;
    const late = view.late;
    const path = derivation.path();
    const spec = service.apiSpec;
    if (path !== null && !spec.isEmpty) {
      const method = derivation.method();
      if (method !== null) {
        e.api = spec.applyValue(method.str, path, late, wantBindings, e.matchedApi);
        if (e.api.matched) e.apiPattern = unchecked(spec.patterns[e.api.winner]).text;
      }
    }
    // Upstream looked for a key whenever a ServiceConfig existed, so the
    // default locations apply even to services without API specs.
    const key = e.values.spare();
    if (apiKeyInto(spec.apiKeys.length > 0 ? spec.apiKeys : DEFAULT_API_KEY_LOCATIONS, derivation.headerMap, path, key, e.values.spare())) {
      e.apiKeyValue = key;
      late.setId(REQUEST_API_KEY, key);
    }
    replaceQuotaCharges<RequestAttributes>(service.quotaRules, view, e.quotas);
  } else if (e.quotas.length != 0) {
    // Array's length setter always calls into the runtime: only when there is something to drop.
    e.quotas.length = 0;
  }

  e.forwardHeader = service !== null ? service.forwardHeader : config.forwardHeader;
  return e;
}
