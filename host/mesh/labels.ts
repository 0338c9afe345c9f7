/**
 * The one selector matcher of the mesh: a `matchLabels` map selects a label
 * set when every entry is in it. An absent or empty map selects every
 * workload (of the namespace the policy applies to). Every policy kind, the
 * Gateway selector and the Service selector go through it.
 */

export type Labels = Readonly<Record<string, string>>;

/** Whether a selector map has entries (a policy with an empty selector is namespace-wide). */
export function hasLabels(matchLabels: Labels | undefined): matchLabels is Labels {
  return matchLabels !== undefined && Object.keys(matchLabels).length > 0;
}

/** Whether `matchLabels` (absent or empty: everything) selects `labels` (absent: none; a DestinationRule subset's labels select endpoints this way too). */
export function labelsMatch(matchLabels: Labels | undefined, labels: Labels | undefined): boolean {
  if (matchLabels === undefined) return true;
  for (const [k, v] of Object.entries(matchLabels)) if (labels?.[k] !== v) return false;
  return true;
}

/**
 * Like labelsMatch, for a workload whose labels may be unknown (a sidecar
 * that reported none): undefined when the answer depends on them.
 */
export function labelsMatchKnown(matchLabels: Labels | undefined, labels: Labels | undefined): boolean | undefined {
  if (!hasLabels(matchLabels)) return true;
  return labels === undefined ? undefined : labelsMatch(matchLabels, labels);
}

/** A Service or Gateway selector: it must have labels to select anything (an empty one selects no pod). */
export function selectorSelects(selector: Labels | undefined, labels: Labels): boolean {
  return hasLabels(selector) && labelsMatch(selector, labels);
}

/** `k=v,k2=v2`, sorted by key, as messages show selectors. */
export function formatLabels(labels: Labels): string {
  return Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}
