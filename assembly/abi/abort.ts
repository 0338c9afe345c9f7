import { proxy_log } from "./imports";

// proxy-wasm log level `critical`.
const LOG_CRITICAL: u32 = 5;

// AssemblyScript turns every failed assertion and `throw` into a call to
// `abort`. A proxy provides no `env.abort`, so the compiler is told (asconfig
// `use`) to call this instead: the reason reaches the proxy's log before the
// trap, as the Rust SDK's panic hook does.
export function abortToProxyLog(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let text = "filter aborted: ";
  if (message !== null) text += message;
  if (fileName !== null) text += " at " + fileName + ":" + line.toString() + ":" + column.toString();
  const bytes = String.UTF8.encode(text);
  proxy_log(LOG_CRITICAL, changetype<usize>(bytes), <usize>bytes.byteLength);
  unreachable();
}
