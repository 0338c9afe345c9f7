// `import meshFilter from 'mesh-policy-filter/fastify'`: the filter as a
// Fastify plugin. Its hooks (onRequest decides, onResponse and
// onRequestAbort report) go on the context the plugin is registered in, as
// fastify-plugin's skip-override does: registered at the root they cover
// every route, registered inside a plugin only that plugin's routes.

import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { createFilter } from "./index.ts";
import { type Decider, applyAddedHeaders, checkRequestOf, countResponseBytes, requestBytes } from "./middleware.ts";
import type { Decision, FastifyFilterOptions, Filter, HeaderValue, LogFunction } from "./types.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** The filter the plugin runs (its stats, or check() for a request of your own). */
    meshFilter: Filter;
  }
}

interface Pending {
  decision: Decision;
  started: number;
  responseBytes: () => number;
}

function deciderOf(filter: Filter): Decider {
  const own = filter as Filter & Partial<Decider>;
  return typeof own.decide === "function" ? (own as Decider) : { decide: (request) => filter.check(request) };
}

const plugin: FastifyPluginAsync<FastifyFilterOptions> = async (instance: FastifyInstance, options: FastifyFilterOptions) => {
  const given = "filter" in options ? options.filter : undefined;
  const log: LogFunction = (level, message) => instance.log[level](message);
  const filter = given ?? (await createFilter({ log, ...(options as Exclude<FastifyFilterOptions, { filter: Filter }>) }));
  const decider = deciderOf(filter);
  const pending = new WeakMap<FastifyRequest, Pending>();
  const skip = options.skip;

  const report = (request: FastifyRequest, reply: FastifyReply | undefined) => {
    const p = pending.get(request);
    if (!p) return;
    pending.delete(request);
    p.decision.report({
      status: reply ? reply.statusCode : 0,
      requestBytes: requestBytes(request.raw),
      responseBytes: p.responseBytes(),
      durationMs: performance.now() - p.started,
      headers: reply ? (reply.getHeaders() as Record<string, HeaderValue>) : undefined,
    });
  };

  instance.decorate("meshFilter", filter);
  instance.addHook("onRequest", (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (skip?.(request.url, request.method)) return done();
    const started = performance.now();
    const go = (decision: Decision) => {
      pending.set(request, { decision, started, responseBytes: countResponseBytes(reply.raw) });
      if (decision.allowed) {
        applyAddedHeaders(request.raw, decision);
        done();
      } else {
        // A hook that answers does not call done().
        reply.code(decision.status).headers(decision.headers).send(decision.body);
      }
    };
    let decided: Decision | Promise<Decision>;
    try {
      decided = decider.decide(checkRequestOf(request.raw, request.url));
    } catch (e) {
      return done(e as Error);
    }
    if (decided instanceof Promise) decided.then(go, (e: Error) => done(e));
    else go(decided);
  });
  instance.addHook("onResponse", (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    report(request, reply);
    done();
  });
  instance.addHook("onRequestAbort", (request: FastifyRequest, done: () => void) => {
    report(request, undefined);
    done();
  });
  if (!given) instance.addHook("onClose", () => filter.close());
};

// fastify-plugin's markers, set by hand (no dependency for three properties):
// skip-override puts the hooks on the registering context.
const meshFilter: FastifyPluginAsync<FastifyFilterOptions> = Object.assign(plugin, {
  [Symbol.for("skip-override")]: true,
  [Symbol.for("fastify.display-name")]: "mesh-policy-filter",
  [Symbol.for("plugin-meta")]: { name: "mesh-policy-filter", fastify: "4.x || 5.x" },
});

export default meshFilter;
export type { FastifyFilterOptions } from "./types.ts";
