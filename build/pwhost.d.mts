/** Builds (or reuses) the real proxy-wasm host driver and returns its path (build/pwhost.mjs). */
export function ensurePwdriver(root: string): string;
