import type { ContextState } from "./abi_contexts.ts";
import type { Callback } from "./abi_exports.ts";

export class WasmTrap extends Error {
  readonly code = "WASM_TRAP";
}

/**
 * Runs a VM's callbacks into the module: the callback's context is the
 * effective one while it runs and the previous one after; the effects the
 * module deferred (continue, local reply) run at the end of the outermost
 * callback, as Envoy applies them; a trap fails the VM (WasmTrap), after
 * which every callback is refused.
 */
export class CallbackRunner {
  /** Set when a callback trapped: the instance must not be used again. */
  failed = false;

  constructor(private readonly state: ContextState) {}

  call<T>(contextId: number, fn: () => T): T {
    const previous = this.enter(contextId);
    try {
      return fn();
    } catch (e) {
      throw this.trapped(e);
    } finally {
      this.leave(previous);
    }
  }

  /**
   * `call` for the callbacks every request makes: the export and its
   * arguments are passed as they are, with no closure made per callback.
   * An absent export, or one that returns nothing, answers `fallback`.
   */
  invoke(contextId: number, fn: Callback | undefined, fallback: number, a = 0, b = 0, c = 0): number {
    const previous = this.enter(contextId);
    try {
      const result = fn === undefined ? undefined : (fn(a, b, c) as number | undefined);
      return result === undefined ? fallback : result;
    } catch (e) {
      throw this.trapped(e);
    } finally {
      this.leave(previous);
    }
  }

  /** Makes `contextId` the effective context for a callback; returns the one to restore. */
  private enter(contextId: number): number {
    if (this.failed) throw new WasmTrap("the filter VM failed earlier and cannot be used");
    const state = this.state;
    const previous = state.current;
    state.current = contextId;
    return previous;
  }

  /** After a callback: the previous effective context again, and (at the outermost callback) the deferred effects. */
  private leave(previous: number): void {
    const state = this.state;
    state.current = previous;
    if (previous === 0 && state.afterCallback.length > 0 && !this.failed) {
      const actions = state.afterCallback;
      state.afterCallback = [];
      for (const action of actions) action();
    }
  }

  /** What a callback's exception becomes: a trap fails the VM (WasmTrap), anything else is thrown as it is. */
  private trapped(e: unknown): unknown {
    if (e instanceof WebAssembly.RuntimeError) {
      this.failed = true;
      return new WasmTrap(`filter trapped: ${e.message}`);
    }
    return e;
  }
}
