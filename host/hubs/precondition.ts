import type { HubRule } from "../config/resources/hub_rules.ts";
import { attributeText, type AttributeMap } from "../wire/compressed.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";
import type { HubConfig } from "./hub_config.ts";
import { lookup, ruleApplies } from "./match.ts";
import type { ReferencedAttributes } from "./referenced.ts";

/** How long, and for how many uses, the client may cache a precondition answer unless a rule asks for less. */
export const DEFAULT_VALID_DURATION_MS = 5000;
export const DEFAULT_VALID_USE_COUNT = 10_000;

export interface PreconditionOutcome {
  code: number;
  message: string;
  validDurationMs: number;
  validUseCount: number;
  /** The rule that denied, if any (`HubRule namespace/name`). */
  deniedBy?: string;
}

/** Called once per deny or allowList action applied to a request. */
export type DispatchObserver = (rule: HubRule) => void;

/**
 * Evaluates the deny and allowList actions of the rules, in namespace/name
 * order; the first action that says no decides. Messages:
 * - deny: the configured message (default `denied by HubRule ns/name`), with the configured code;
 * - allowList: PERMISSION_DENIED `<attribute> <value> is not whitelisted`, `<attribute> is absent, so it is not whitelisted`,
 *   `<attribute> is not a text value, so it is not whitelisted` (bytes, times, maps) or `<attribute> <value> is blacklisted`.
 * The valid duration and use count are the smallest of the defaults and of every rule looked at.
 */
export function evaluatePrecondition(
  config: HubConfig,
  attributes: AttributeMap,
  referenced: ReferencedAttributes,
  onDispatch?: DispatchObserver,
): PreconditionOutcome {
  let validDurationMs = DEFAULT_VALID_DURATION_MS;
  let validUseCount = DEFAULT_VALID_USE_COUNT;
  for (const rule of config.preconditionRules) {
    if (rule.validDurationMs !== undefined) validDurationMs = Math.min(validDurationMs, rule.validDurationMs);
    if (rule.validUseCount !== undefined) validUseCount = Math.min(validUseCount, rule.validUseCount);
    if (!ruleApplies(config, rule, attributes, referenced)) continue;
    for (const action of rule.actions) {
      if (action.kind === "quota") continue;
      onDispatch?.(rule);
      if (action.kind === "deny") {
        return { code: action.code, message: action.message, validDurationMs, validUseCount, deniedBy: rule.id };
      }
      const v = lookup(attributes, action.attribute, referenced);
      const text = v === undefined ? undefined : attributeText(v);
      const listed = text !== undefined && action.values.has(text);
      let message: string | undefined;
      if (action.blacklist && listed) message = `${action.attribute.text} ${text} is blacklisted`;
      else if (!action.blacklist && v === undefined) message = `${action.attribute.text} is absent, so it is not whitelisted`;
      else if (!action.blacklist && text === undefined) message = `${action.attribute.text} is not a text value, so it is not whitelisted`;
      else if (!action.blacklist && !listed) message = `${action.attribute.text} ${text} is not whitelisted`;
      if (message !== undefined) {
        return { code: GRPC_CODES.PERMISSION_DENIED, message, validDurationMs, validUseCount, deniedBy: rule.id };
      }
    }
  }
  return { code: GRPC_CODES.OK, message: "", validDurationMs, validUseCount };
}
