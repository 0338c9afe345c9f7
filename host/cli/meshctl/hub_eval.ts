import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { readDocuments } from "../../config/documents.ts";
import { ConfigError } from "../../config/errors.ts";
import { decodeHubClientDocuments, describeFilterProblem, pluginConfig } from "../../config/hub_client_bundle.ts";
import { evaluationToJson } from "../../filter/evaluation.ts";
import { FilterModule } from "../../wasm/filter_module.ts";
import { EXIT_BAD_CONFIG, EXIT_OK } from "../../daemon/exit_codes.ts";
import { requestFromLine } from "./hub_eval_request.ts";

export interface HubEvalOptions {
  files: string[];
  input: Readable;
  output: Writable;
  errors: Writable;
  module?: FilterModule;
  now?: () => bigint;
}

/**
 * `meshctl x hub-eval -f FILE…`: loads hub client resources, then for each JSON
 * line on `input` prints one JSON line with the attributes, API spec match, API
 * key and quotas the filter derives (see EvaluationJson). A bad resource ends
 * the run with exit code 2 before any input is read; a bad input line prints
 * `{"error": …}` and the run goes on.
 */
export async function runHubEval(o: HubEvalOptions): Promise<number> {
  const filter = o.module ?? FilterModule.load();
  let handle: number;
  try {
    const docs = o.files.flatMap((f) => readDocuments(f));
    const bundle = decodeHubClientDocuments(docs, { template: (t) => filter.checkTemplate(t), regex: (p) => filter.checkRegex(p) });
    for (const w of bundle.warnings) o.errors.write(`warning: ${w}\n`);
    const configured = filter.configure(JSON.stringify(pluginConfig(bundle)));
    if ("error" in configured) {
      o.errors.write(`error: ${describeFilterProblem(bundle, configured.error)}\n`);
      return EXIT_BAD_CONFIG;
    }
    for (const w of configured.warnings) o.errors.write(`warning: ${describeFilterProblem(bundle, w)}\n`);
    handle = configured.handle;
  } catch (e) {
    if (e instanceof ConfigError) {
      o.errors.write(`error: ${e.message}\n`);
      return EXIT_BAD_CONFIG;
    }
    throw e;
  }
  const now = o.now ?? (() => BigInt(Date.now()) * 1_000_000n);
  const lines = createInterface({ input: o.input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim().length === 0) continue;
    const request = requestFromLine(line, now);
    if ("error" in request) {
      o.output.write(`${JSON.stringify({ error: request.error })}\n`);
      continue;
    }
    const bytes = filter.evaluate(handle, request, true);
    o.output.write(`${JSON.stringify(evaluationToJson(bytes))}\n`);
  }
  filter.release(handle);
  return EXIT_OK;
}
