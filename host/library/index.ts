// `import { createFilter } from 'mesh-policy-filter'`: the filter in a Node
// server (docs/embedding.md). Importing this runs nothing: the module is
// loaded and the configuration read when createFilter is called.

import { EmbeddedFilter } from "./embedded_filter.ts";
import type { Filter, FilterOptions } from "./types.ts";

/**
 * Loads the filter module with the hub client configuration (decoded and
 * checked as the daemons do: a bad document rejects with its file, resource
 * and field path) and prepares the hub connection, made on the first call.
 *
 * @example
 * const filter = await createFilter({ config: "./mesh-config", hub: "127.0.0.1:9091" });
 * app.use(filter.middleware());
 */
export async function createFilter(options: FilterOptions): Promise<Filter> {
  return EmbeddedFilter.create(options);
}

export type * from "./types.ts";
