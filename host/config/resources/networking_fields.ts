import type { Field } from "../decode.ts";
import { isDns1123Label } from "./syntax.ts";

// Field decoders the networking resources share.

/** `exportTo`: the namespaces a networking resource is visible to (`.` its own, `*` all). */
export function exportTo(f: Field): readonly string[] {
  return Object.freeze(
    f.list().map((item) => {
      const s = item.nonEmptyString();
      if (s !== "." && s !== "*" && !isDns1123Label(s)) item.fail('".", "*" or a namespace name');
      return s;
    }),
  );
}

export function positiveDuration(f: Field): number | undefined {
  if (!f.present) return undefined;
  const ms = f.durationMs();
  if (ms < 0) f.invalid("expected a duration that is not negative");
  return ms;
}
