/** A system tool a test (or `npm run conformance`) runs, and the Debian package that has it (build/system-tools.mjs). */
export interface SystemTool {
  command: string;
  debianPackage: string;
  unpackOnly?: boolean;
  usedBy: string;
}
export const SYSTEM_TOOLS: readonly SystemTool[];
export const CONFORMANCE_TOOLS: readonly SystemTool[];
/** Makes every tool of `tools` runnable, installing what is missing; returns the PATH to run with. */
export function ensureSystemTools(log?: (line: string) => void, tools?: readonly SystemTool[]): string;
