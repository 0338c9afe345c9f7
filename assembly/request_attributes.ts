import { RequestView } from "./request";
import { AttributeBag, AttributeSource } from "./attributes/bag";
import { RequestDerivation } from "./request_derivation";
import { attributeId } from "./attributes/names";
import { RequestValues } from "./attributes/request_values";
import { AttributeValue } from "./attributes/value";

/**
 * The check-time attributes of one request, in three layers applied in the
 * spec's order (later wins): `early`, the static attributes of the filter and
 * the service and the forwarded ones; the request's own (RequestDerivation);
 * `late`, the API attributes and `request.api_key`. An attribute is looked
 * up through the layers by id, so a request whose quota rules and cached
 * answer read a few attributes never has the rest derived, and nothing is
 * copied; `asBag()` builds the bag an encoder or a report needs, once, as
 * the eager order of application would have filled it.
 */
export class RequestAttributes extends AttributeSource {
  /** The static (and forwarded) attributes: shared, never written through this. */
  early: AttributeBag = NO_ATTRIBUTES;
  /** The API attributes and API key: written by the evaluation before anything is read. */
  readonly late: AttributeBag = new AttributeBag(8);
  readonly derivation: RequestDerivation = new RequestDerivation();
  // The attributes as one bag, built on first use per request.
  private readonly built: AttributeBag = new AttributeBag();
  private builtFor: bool = false;

  /** Back to no attributes, bound to `req` (its own values made in `values`), keeping storage. */
  // @ts-ignore: decorator
  @inline reset(req: RequestView, values: RequestValues): void {
    this.early = NO_ATTRIBUTES;
    this.late.clear();
    this.derivation.reset(req, values);
    this.builtFor = false;
  }

  // @ts-ignore: decorator
  @inline getId(id: i32): AttributeValue | null {
    const late = this.late.getId(id);
    if (late !== null) return late;
    const derived = this.derivation.value(id);
    return derived !== null ? derived : this.early.getId(id);
  }

  get(name: string): AttributeValue | null {
    const id = attributeId(name);
    if (id >= 0) return this.getId(id);
    // A name without an id is never derived.
    const late = this.late.get(name);
    return late !== null ? late : this.early.get(name);
  }

  asBag(): AttributeBag {
    const bag = this.built;
    if (!this.builtFor) {
      bag.assign(this.early);
      this.derivation.addTo(bag);
      bag.merge(this.late);
      this.builtFor = true;
    }
    return bag;
  }
}

const NO_ATTRIBUTES = new AttributeBag(0);
