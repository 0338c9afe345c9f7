// Host functions of the proxy-wasm ABI 0.2.1, imported from module `env`.
// Declarations only; arities follow the ABI tables exactly, because a proxy
// refuses a module whose import signatures differ from its own.

@external("env", "proxy_log")
export declare function proxy_log(level: u32, messagePtr: usize, messageLen: usize): u32;
