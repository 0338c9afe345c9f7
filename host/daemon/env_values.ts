import { parseGoDuration } from "./duration.ts";

/** The spellings Go's strconv.ParseBool accepts. */
export const GO_TRUE: readonly string[] = ["1", "t", "T", "TRUE", "true", "True"];
export const GO_FALSE: readonly string[] = ["0", "f", "F", "FALSE", "false", "False"];

/**
 * Typed readers of a daemon's spec 2 variables: unset or empty is the
 * default; a bad value throws naming the variable, the value and what was
 * expected (the daemon turns it into its one-line usage error, exit 2).
 * Booleans as Go's strconv.ParseBool reads them, durations as Go's.
 */
export function envReader(env: NodeJS.ProcessEnv) {
  const set = (name: string) => (env[name] === undefined || env[name] === "" ? undefined : env[name]);
  const bad = (name: string, value: string, expected: string) => new Error(`${name}=${JSON.stringify(value)}: expected ${expected}`);
  return {
    text: set,
    bool(name: string, fallback: boolean): boolean {
      const v = set(name);
      if (v === undefined) return fallback;
      if (GO_TRUE.includes(v)) return true;
      if (GO_FALSE.includes(v)) return false;
      throw bad(name, v, "true or false");
    },
    int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
      const v = set(name);
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!/^[-+]?\d+$/.test(v) || n < min || n > max) throw bad(name, v, `an integer from ${min} to ${max}`);
      return n;
    },
    /** Milliseconds. */
    duration(name: string, fallbackMs: number): number {
      const v = set(name);
      if (v === undefined) return fallbackMs;
      const ms = parseGoDuration(v);
      if (ms === undefined || ms < 0) throw bad(name, v, 'a duration such as "100ms", "10s" or "1m30s"');
      return ms;
    },
  };
}
