import { QuotaCharge } from "../quota";
import { CheckResponse } from "../hub/check_response";
import { StatusCode } from "../status_codes";

/** The final status of a check: google.rpc code and message. */
export class Verdict {
  constructor(
    public code: i32,
    public message: string,
  ) {}

  get ok(): bool {
    return this.code == StatusCode.OK;
  }
}

/** The OK verdict of every request the caches allow: shared, never mutated. */
export const OK_VERDICT = new Verdict(StatusCode.OK, "");

/** Quota names merged as CheckRequest.quotas merges them (a map). */
export function distinctQuotaNames(charges: Array<QuotaCharge>): Array<string> {
  const names = new Array<string>();
  for (let i = 0; i < charges.length; i++) if (!names.includes(charges[i].quota)) names.push(charges[i].quota);
  return names;
}

/**
 * The verdict of a remote check that carried `requested` quotas exactly (not
 * best effort), as upstream decided it (hub-client.md §5, §6.1–6.2):
 * - no PreconditionResult → INVALID_ARGUMENT;
 * - a failed precondition decides, and the quota outcome is ignored
 *   (INTERNAL counts as OK under FAIL_OPEN);
 * - each quota is granted when its result is missing, UNAVAILABLE, or grants
 *   more than 0 (quota fails open on its own); otherwise RESOURCE_EXHAUSTED
 *   `Quota is exhausted for: <names>`.
 */
export function decideCheck(response: CheckResponse, requested: Array<QuotaCharge>, failOpen: bool): Verdict {
  if (!response.hasPrecondition) return new Verdict(StatusCode.INVALID_ARGUMENT, "hub answered without a precondition result");
  const status = response.precondition.status;
  if (status.code != StatusCode.OK && !(status.code == StatusCode.INTERNAL && failOpen)) return new Verdict(status.code, status.message);
  const names = distinctQuotaNames(requested);
  const exhausted = new Array<string>();
  for (let i = 0; i < names.length; i++) {
    if (!quotaGranted(response, names[i])) exhausted.push(names[i]);
  }
  if (exhausted.length > 0) return new Verdict(StatusCode.RESOURCE_EXHAUSTED, "Quota is exhausted for: " + exhausted.join(","));
  return new Verdict(StatusCode.OK, "");
}

function quotaGranted(response: CheckResponse, name: string): bool {
  for (let i = response.quotas.length - 1; i >= 0; i--) {
    const q = response.quotas[i];
    if (q.name != name) continue;
    return q.status.code == StatusCode.UNAVAILABLE || q.grantedAmount > 0;
  }
  return true;
}
