// Entry of build/filter.wasm.
// The abort handler must be part of the program for asconfig's `use abort=`.
import "./abi/abort";

// The proxy-wasm ABI: what a proxy loads.
export * from "./entry/exports";

// The pure core, for embedders that call it directly (meshctl x hub-eval,
// configuration validation, the hub server's regexes, benchmarks and tests).
export * from "./embed/exports";
export * from "./embed/regex_exports";
export * from "./embed/template_exports";
export * from "./embed/wire_exports";
export * from "./embed/allocations";
