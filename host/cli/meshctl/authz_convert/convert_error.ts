import type { Origin } from "./rbac.ts";

/** Something the conversion cannot carry over faithfully; the message names file, resource and field. */
export class ConvertError extends Error {
  constructor(origin: Origin | undefined, path: string, reason: string) {
    super([origin?.file, origin?.resource, path, reason].filter((p) => !!p).join(": "));
    this.name = "ConvertError";
  }
}
