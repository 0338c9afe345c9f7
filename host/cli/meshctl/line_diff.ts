/**
 * A unified diff of two texts, line by line (as `diff -u` prints it, with
 * `context` lines around each change): `meshctl proxy-status <pod>` shows
 * how a proxy's configuration differs from the control plane's this way, as
 * istioctl does. Longest common subsequence after the common head and tail
 * are set aside; configurations differ in few places.
 */
export function unifiedDiff(a: string, b: string, fromLabel: string, toLabel: string, context = 3): string {
  const x = a.split("\n");
  const y = b.split("\n");
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  // ops over the whole texts: " " same, "-" only in a, "+" only in b
  const ops: Array<[" " | "-" | "+", string]> = x.slice(0, head).map((l) => [" ", l] as [" ", string]);
  const lcs: number[][] = Array.from({ length: xs.length + 1 }, () => new Array<number>(ys.length + 1).fill(0));
  for (let i = xs.length - 1; i >= 0; i--)
    for (let j = ys.length - 1; j >= 0; j--) lcs[i][j] = xs[i] === ys[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  let i = 0;
  let j = 0;
  while (i < xs.length || j < ys.length) {
    if (i < xs.length && j < ys.length && xs[i] === ys[j]) {
      ops.push([" ", xs[i++]]);
      j++;
    } else if (i < xs.length && (j === ys.length || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push(["-", xs[i++]]);
    else ops.push(["+", ys[j++]]);
  }
  for (const l of x.slice(x.length - tail)) ops.push([" ", l]);
  if (!ops.some(([op]) => op !== " ")) return "";
  const out = [`--- ${fromLabel}`, `+++ ${toLabel}`];
  let k = 0;
  while (k < ops.length) {
    while (k < ops.length && ops[k][0] === " ") k++;
    if (k >= ops.length) break;
    const start = Math.max(0, k - context);
    let end = k;
    // extend the hunk while the next change is within 2 × context lines
    for (;;) {
      while (end < ops.length && ops[end][0] !== " ") end++;
      let next = end;
      while (next < ops.length && ops[next][0] === " ") next++;
      if (next < ops.length && next - end <= 2 * context) end = next;
      else break;
    }
    const stop = Math.min(ops.length, end + context);
    const before = ops.slice(0, start);
    const hunk = ops.slice(start, stop);
    const aStart = before.filter(([op]) => op !== "+").length + 1;
    const bStart = before.filter(([op]) => op !== "-").length + 1;
    const aLen = hunk.filter(([op]) => op !== "+").length;
    const bLen = hunk.filter(([op]) => op !== "-").length;
    out.push(`@@ -${aStart},${aLen} +${bStart},${bLen} @@`);
    for (const [op, line] of hunk) out.push(`${op}${line}`);
    k = stop;
  }
  return `${out.join("\n")}\n`;
}
