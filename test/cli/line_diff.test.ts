import assert from "node:assert/strict";
import { test } from "node:test";
import { unifiedDiff } from "../../host/cli/meshctl/line_diff.ts";

// The diff `meshctl proxy-status <pod>` prints, checked against what `diff -u` prints for the same texts.

const lines = (n: number, change: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => change[i + 1] ?? `line ${i + 1}`).join("\n");

test("equal texts: no diff", () => {
  assert.equal(unifiedDiff("a\nb", "a\nb", "A", "B"), "");
});

test("one changed line: one hunk with three lines of context, removal before addition", () => {
  assert.equal(
    unifiedDiff(lines(10), lines(10, { 5: "five" }), "Disco Clusters", "Proxy Clusters"),
    "--- Disco Clusters\n+++ Proxy Clusters\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n",
  );
});

test("changes far apart are separate hunks; near ones share a hunk; counts follow insertions", () => {
  const a = lines(30);
  const b = lines(30, { 2: "two", 4: "four", 25: "line 25\nextra" });
  assert.equal(
    unifiedDiff(a, b, "A", "B"),
    [
      "--- A",
      "+++ B",
      "@@ -1,7 +1,7 @@",
      " line 1",
      "-line 2",
      "+two",
      " line 3",
      "-line 4",
      "+four",
      " line 5",
      " line 6",
      " line 7",
      "@@ -23,6 +23,7 @@",
      " line 23",
      " line 24",
      " line 25",
      "+extra",
      " line 26",
      " line 27",
      " line 28",
      "",
    ].join("\n"),
  );
});
