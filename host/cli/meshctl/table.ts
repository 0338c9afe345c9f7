/** Space between columns, as upstream's tabwriter output leaves it. */
export const COLUMN_GAP = 3;

/**
 * Left-aligned columns (the header row first), every column as wide as its
 * widest cell plus COLUMN_GAP; no trailing spaces.
 *
 * @example formatTable([["NAME", "PORT"], ["inbound", "15006"]]) // "NAME      PORT\ninbound   15006\n"
 */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + COLUMN_GAP)))
        .join("")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}

/** `a=1,b=2` for a label map; `-` when empty. */
export function formatLabels(labels: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(labels ?? {});
  return entries.length === 0 ? "-" : entries.map(([k, v]) => `${k}=${v}`).join(",");
}
