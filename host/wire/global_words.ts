import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROTO_DIR } from "./protos.ts";

/**
 * The deployment-wide global word list of the hub protocol: index i >= 0 in
 * compressed attributes means word i. Only appending keeps indexes stable.
 * (Upstream's C++ client kept stray quotes in words 94, 111, 112 and 218;
 * our filter and hub both use the unquoted words.)
 */
export const GLOBAL_WORDS: readonly string[] = Object.freeze(
  JSON.parse(readFileSync(join(PROTO_DIR, "mesh", "hub", "v1", "global_words.json"), "utf8")).words as string[],
);
