// Entry of build/filter.wasm.
// The abort handler must be part of the program for asconfig's `use abort=`.
import "./abi/abort";

export * from "./embed/exports";
export * from "./embed/regex_exports";
export * from "./embed/template_exports";
