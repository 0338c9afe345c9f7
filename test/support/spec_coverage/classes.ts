// The classes of the coverage table and one classified spec entry.

export const CLASSES = ["working", "accepted", "partial", "refused", "missing", "unprobed"] as const;
export type Class = (typeof CLASSES)[number];

/** What each class means, for the page's legend. */
export const CLASS_MEANING: Readonly<Record<Class, string>> = {
  working:
    "the program does it: a flag documented in `--help` and accepted (at its spec default, or refused only for a value it checks), a variable it reads (a malformed value is refused naming it), a counter scraped under its name and type, a command that runs, a field validate checks, a rule whose outcome simulate shows",
  accepted:
    "taken without complaint, but this probe observes no effect (a string variable given an arbitrary value; a command that runs but needs something absent here)",
  partial: "a row naming several items, some working and some not (the evidence lists each)",
  refused: "the program refuses it with a reason (exit 2 for daemons and usage, exit 69 for meshctl's orchestrator commands); the evidence is its words",
  missing: "unknown to the program: an unknown option, a malformed value silently ignored, a counter not exported, a field validate does not know",
  unprobed: "no cheap probe exists in this script (the evidence says why)",
};

export interface Entry {
  readonly file: string;
  readonly section: string;
  /** The spec row (its first cell, or the item of a row that names several). */
  readonly spec: string;
  readonly program: string;
  readonly class: Class;
  readonly evidence: string;
}

/** The class of a row naming several items. */
export function combine(classes: readonly Class[]): Class {
  const set = new Set(classes);
  if (set.size === 0) return "unprobed";
  if (set.size === 1) return classes[0];
  if ([...set].every((c) => c === "working" || c === "accepted")) return "working";
  return "partial";
}
