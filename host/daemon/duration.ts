/**
 * Durations in Go's syntax, as the daemons' flags take and print them:
 * `10s`, `1m30s`, `2m0s`, `1.5h`, `250ms`, `0`.
 */
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const WHOLE = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g;

/** Milliseconds, or undefined when `text` is not a Go duration. */
export function parseGoDuration(text: string): number | undefined {
  if (text === "0" || text === "+0" || text === "-0") return 0;
  if (!WHOLE.test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(PART)) ms += Number(m[1]) * UNIT_MS[m[2]];
  return text.startsWith("-") ? -ms : ms;
}

/** Go's Duration.String(): `0s`, `250ms`, `10s`, `2m0s`, `1h0m0s`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${+rest.toFixed(6)}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${+(rest / 1000).toFixed(9)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}
