import { InvalidArgumentError } from "commander";
import { parseGoDuration } from "./duration.ts";

/**
 * Value parsers for commander options, with the flag syntax of the upstream
 * Go daemons (pflag): `--flag`, `--flag=true|false`, Go durations.
 */
export function parseBoolFlag(value: string | boolean | undefined): boolean {
  if (value === undefined || value === true || value === "true" || value === "1") return true;
  if (value === false || value === "false" || value === "0") return false;
  throw new InvalidArgumentError("expected true or false");
}

export function intFlag(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^[-+]?\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };
}

/** A non-negative number (a rate limit may be fractional, e.g. 0.5 per second). */
export function rateFlag(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a non-negative number");
  return n;
}

export function durationFlag(value: string): number {
  const ms = parseGoDuration(value);
  if (ms === undefined || ms < 0) throw new InvalidArgumentError('expected a duration such as "10s", "1m30s" or "250ms"');
  return ms;
}
