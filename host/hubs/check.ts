import type Long from "long";
import { AttributeDecodeError, decodeAttributes, type AttributeMap, type CompressedAttributesMessage, type GlobalDictionary } from "../wire/compressed.ts";
import type { PlainCheck } from "../wire/check_request_reader.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";
import type { HubConfig } from "./hub_config.ts";
import { evaluatePrecondition } from "./precondition.ts";
import { planQuota } from "./quota.ts";
import type { Allocation, QuotaStore } from "./quota_store.ts";
import { ReferencedAttributes, type ReferencedAttributesObject } from "./referenced.ts";
import { INVALID_ATTRIBUTES, RpcError } from "./rpc_error.ts";

/** `mesh.hub.v1.CheckRequest` as protobufjs decodes it. */
export interface CheckRequestMessage {
  attributes?: CompressedAttributesMessage | null;
  globalWordCount?: number | null;
  deduplicationId?: string | null;
  quotas?: Record<string, { amount?: number | Long | null; bestEffort?: boolean | null }> | null;
}

interface DurationObject {
  seconds: number;
  nanos: number;
}

export interface QuotaResultObject {
  validDuration: DurationObject;
  grantedAmount: number;
  referencedAttributes: ReferencedAttributesObject;
  status?: { code: number; message: string };
}

/** `mesh.hub.v1.CheckResponse` ready for encoding. */
export interface CheckResponseObject {
  precondition: {
    status: { code: number; message: string };
    validDuration: DurationObject;
    validUseCount: number;
    referencedAttributes: ReferencedAttributesObject;
  };
  quotas: Record<string, QuotaResultObject>;
}

export type DispatchVariety = "check" | "quota" | "report";

export interface CheckContext {
  config: HubConfig;
  quotas: QuotaStore;
  dictionary: GlobalDictionary;
  /** Counts one dispatch to a handler (a rule's deny/allowList action, a HubQuota). */
  onDispatch?: (handler: string, variety: DispatchVariety) => void;
}

export function durationObject(ms: number): DurationObject {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** Rejects a client that knows global words the hub does not (it then falls back to the original list). */
export function checkGlobalWordCount(count: number, dictionary: GlobalDictionary): void {
  if (count > dictionary.size) {
    throw new RpcError(
      GRPC_CODES.INVALID_ARGUMENT,
      `${INVALID_ATTRIBUTES}: the client's global word list has ${count} words, the hub knows ${dictionary.size}`,
    );
  }
}

export function decodeOrReject(
  message: CompressedAttributesMessage | null | undefined,
  dictionary: GlobalDictionary,
  defaultWords?: readonly string[],
  where = "",
  target?: AttributeMap,
): AttributeMap {
  try {
    return decodeAttributes(message, { dictionary, defaultWords }, target);
  } catch (e) {
    if (e instanceof AttributeDecodeError) throw new RpcError(GRPC_CODES.INVALID_ARGUMENT, `${INVALID_ATTRIBUTES}: ${where}${e.message}`);
    throw e;
  }
}

function amountOf(v: number | Long | null | undefined): number {
  if (v === null || v === undefined) return 0;
  const n = typeof v === "number" ? v : Number(v.toString());
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, n));
}

/**
 * Answers one Check: preconditions from the HubRules, then (only when they
 * pass, as upstream) one QuotaResult per requested quota. Throws RpcError
 * INVALID_ARGUMENT for undecodable attributes (a PlainCheck's are decoded
 * already: check_request_reader.ts). Synchronous while the quota
 * store is (memory); a promise when an allocation waits for a shared store.
 */
export function check(ctx: CheckContext, request: CheckRequestMessage | PlainCheck): CheckResponseObject | Promise<CheckResponseObject> {
  const clientWords = request.globalWordCount ?? 0;
  checkGlobalWordCount(clientWords, ctx.dictionary);
  const attributes = request.attributes instanceof Map ? request.attributes : decodeOrReject(request.attributes, ctx.dictionary);
  const referenced = new ReferencedAttributes();
  const outcome = evaluatePrecondition(ctx.config, attributes, referenced, ctx.onDispatch && ((rule) => ctx.onDispatch!(rule.id, "check")));
  const response: CheckResponseObject = {
    precondition: {
      status: { code: outcome.code, message: outcome.message },
      validDuration: durationObject(outcome.validDurationMs),
      validUseCount: outcome.validUseCount,
      referencedAttributes: referenced.toObject(ctx.dictionary, clientWords),
    },
    quotas: {},
  };
  if (outcome.code !== GRPC_CODES.OK || !request.quotas) return response;
  let waiting: Array<Promise<void>> | undefined;
  for (const name of Object.keys(request.quotas).sort()) {
    const params = request.quotas[name];
    const amount = amountOf(params.amount);
    const quotaReferenced = new ReferencedAttributes();
    const plan = planQuota(ctx.config, name, attributes, quotaReferenced);
    const result: QuotaResultObject = {
      validDuration: durationObject(plan.kind === "limited" ? 0 : outcome.validDurationMs),
      grantedAmount: 0,
      referencedAttributes: quotaReferenced.toObject(ctx.dictionary, clientWords),
    };
    response.quotas[name] = result;
    if (amount < 0) {
      result.status = { code: GRPC_CODES.INVALID_ARGUMENT, message: `quota ${name}: amount ${amount} is negative` };
    } else if (plan.kind === "unlimited") {
      result.grantedAmount = amount;
    } else {
      ctx.onDispatch?.(plan.quota.id, "quota");
      const allocation = ctx.quotas.allocate({
        quotaName: name,
        key: plan.counterKey,
        algorithm: plan.quota.rateLimitAlgorithm,
        maxAmount: plan.maxAmount,
        windowMs: plan.quota.validDurationMs,
        bucketMs: plan.quota.bucketDurationMs,
        amount,
        bestEffort: params.bestEffort === true,
        deduplicationId: request.deduplicationId ?? undefined,
      });
      if (allocation instanceof Promise) (waiting ??= []).push(allocation.then((a) => fillQuotaResult(result, a)));
      else fillQuotaResult(result, allocation);
    }
  }
  return waiting === undefined ? response : Promise.all(waiting).then(() => response);
}

function fillQuotaResult(result: QuotaResultObject, allocation: Allocation): void {
  result.grantedAmount = allocation.granted;
  result.validDuration = durationObject(allocation.validDurationMs);
  if (allocation.status !== undefined) result.status = allocation.status;
}
