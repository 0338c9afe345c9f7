import { type AttributeJson, type DecodedAttributeValue, attributesToJson } from "../wire/attribute_json.ts";
import { messageType } from "../wire/protos.ts";

/** One line of `meshctl x hub-eval` output (the fixed contract; optional fields may only be added). */
export interface EvaluationJson {
  attributes: Record<string, AttributeJson>;
  apiSpec: { matched: boolean; pattern: string | null; bindings: Record<string, string> };
  apiKey: string | null;
  quotas: Array<{ quota: string; charge: number }>;
  /** Attributes the filter forwards upstream in `x-mesh-attributes`; present only when there are some. */
  forwardedAttributes?: Record<string, AttributeJson>;
}

interface DecodedEvaluation {
  attributes?: { attributes?: Record<string, DecodedAttributeValue> };
  apiSpec?: { matched?: boolean; pattern?: string; bindings?: Record<string, string> };
  apiKey?: string | null;
  quotas?: Array<{ quota: string; charge: { toString(): string } | number }>;
  forwardHeader?: string | null;
}

/** mesh.filter.v1.Evaluation bytes from the module → the hub-eval JSON form. */
export function evaluationToJson(bytes: Uint8Array): EvaluationJson {
  const e = messageType("mesh.filter.v1.Evaluation").decode(bytes) as unknown as DecodedEvaluation;
  const api = e.apiSpec ?? {};
  const hasKey = Object.hasOwn(e, "apiKey") && e.apiKey !== null && e.apiKey !== undefined;
  const out: EvaluationJson = {
    attributes: attributesToJson(e.attributes?.attributes ?? {}),
    apiSpec: {
      matched: api.matched ?? false,
      pattern: api.matched ? (api.pattern ?? "") : null,
      bindings: { ...(api.bindings ?? {}) },
    },
    apiKey: hasKey ? (e.apiKey as string) : null,
    quotas: (e.quotas ?? []).map((q) => ({ quota: q.quota, charge: Number(q.charge.toString()) })),
  };
  if (e.forwardHeader) out.forwardedAttributes = decodeForwardHeader(e.forwardHeader);
  return out;
}

/** Decodes an `x-mesh-attributes` header value (base64 mesh.hub.v1.Attributes). */
export function decodeForwardHeader(value: string): Record<string, AttributeJson> {
  const a = messageType("mesh.hub.v1.Attributes").decode(Buffer.from(value, "base64")) as unknown as {
    attributes?: Record<string, DecodedAttributeValue>;
  };
  return attributesToJson(a.attributes ?? {});
}
