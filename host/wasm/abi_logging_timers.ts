import { WasmStatus } from "./abi_types.ts";
import type { ModuleMemory } from "./abi_memory.ts";
import type { ContextState, HostEnvironment } from "./abi_contexts.ts";
import { LOG_LEVELS } from "./filter_module.ts";

/** Logging, the clock, and the root context's tick period. */
export function loggingAndTimerImports(state: ContextState, memory: ModuleMemory, env: HostEnvironment) {
  // The clock repeats its value (the sidecar's per millisecond): its two
  // 32-bit halves are kept, a store each, with no bigint write.
  const halves = new Uint32Array(2);
  let lastNow = -1n;
  let lastMs = Number.NaN;
  const millis = env.nowMilliseconds;
  return {
    proxy_log(level: number, ptr: number, len: number) {
      if (level > 5) return WasmStatus.BadArgument;
      env.log(LOG_LEVELS[level], memory.text(ptr, len));
      return WasmStatus.Ok;
    },
    proxy_get_log_level(out: number) {
      memory.view.setUint32(out, env.logLevel ?? 2, true);
      return WasmStatus.Ok;
    },
    proxy_get_current_time_nanoseconds(out: number) {
      if (millis !== undefined) {
        const ms = millis();
        if (ms !== lastMs) {
          lastMs = ms;
          if (!millisecondsAsNanos(ms, halves)) nanosHalves(BigInt(ms) * 1_000_000n, halves);
        }
      } else {
        const now = env.now();
        if (now !== lastNow) {
          lastNow = now;
          nanosHalves(now, halves);
        }
      }
      const view = memory.view;
      view.setUint32(out, halves[0], true);
      view.setUint32(out + 4, halves[1], true);
      return WasmStatus.Ok;
    },
    proxy_set_tick_period_milliseconds(ms: number) {
      env.tickPeriod(state.rootOf(state.current), ms);
      return WasmStatus.Ok;
    },
  };
}

/** The low and high 32 bits of `nanos` as a u64 (two's complement when negative), into `out`. */
function nanosHalves(nanos: bigint, out: Uint32Array): void {
  out[0] = Number(BigInt.asUintN(32, nanos));
  out[1] = Number(BigInt.asUintN(32, nanos >> 32n));
}

/** Milliseconds below this (the year 2527) have their nanoseconds computed exactly in doubles by millisecondsAsNanos. */
const EXACT_MILLISECONDS = 2 ** 44;
const TWO_24 = 2 ** 24;
const TWO_32 = 2 ** 32;

/**
 * The low and high 32 bits of `ms` × 10⁶ into `out`, exactly, with no bigint:
 * false (nothing written) unless `ms` is a whole number in [0, 2⁴⁴). With ms
 * = hi·2²⁴ + lo, the product is (hi·10⁶)·2²⁴ + lo·10⁶, and every partial sum
 * below stays under 2⁵³, where doubles are exact.
 */
export function millisecondsAsNanos(ms: number, out: Uint32Array): boolean {
  if (!(ms >= 0 && ms < EXACT_MILLISECONDS && Math.floor(ms) === ms)) return false;
  const hi = Math.floor(ms / TWO_24);
  const lo = ms - hi * TWO_24;
  const a = hi * 1_000_000; // < 2^40: a·2^24 = ⌊a/2^8⌋·2^32 + (a mod 2^8)·2^24
  const aHigh = Math.floor(a / 256);
  const low = (a - aHigh * 256) * TWO_24 + lo * 1_000_000; // < 2^32 + 2^44
  const carry = Math.floor(low / TWO_32);
  out[0] = low - carry * TWO_32;
  out[1] = aHigh + carry;
  return true;
}
