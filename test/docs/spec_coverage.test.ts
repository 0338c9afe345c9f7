// docs/spec-coverage.md is generated from behaviour (test/support/spec_coverage/:
// it runs the built programs on every row of the three spec documents), never
// edited by hand: this test generates it again and fails when the committed
// page differs. It also checks that the classification tells the truth on
// rows whose behaviour it verifies here independently, by running the
// program again: a documented flag, a refused flag (the program's own words),
// a scraped counter, a refused meshctl command, an unknown option.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import type { Entry } from "../support/spec_coverage/classes.ts";
import { type Coverage, generateCoverage } from "../support/spec_coverage/generate.ts";
import { runProgram } from "../support/spec_coverage/run.ts";

const PAGE = join(import.meta.dirname, "..", "..", "docs", "spec-coverage.md");

let coverage: Coverage;
before(async () => {
  coverage = await generateCoverage();
});

const entry = (file: string, spec: string, program: string): Entry => {
  const found = coverage.entries.filter((e) => e.file.startsWith(file) && e.spec === spec && e.program === program);
  assert.equal(found.length, 1, `one entry for ${file} ${spec} (${program}), found ${found.length}`);
  return found[0];
};

describe("docs/spec-coverage.md", { timeout: 1_200_000 }, () => {
  it("is what the programs do now (regenerate it with `npm run spec-coverage`)", () => {
    const committed = readFileSync(PAGE, "utf8");
    if (committed === coverage.markdown) return;
    const a = committed.split("\n");
    const b = coverage.markdown.split("\n");
    const changed = b.flatMap((line, i) => (line === a[i] ? [] : [`line ${i + 1}:\n  committed: ${a[i] ?? "(none)"}\n  now:       ${line}`])).slice(0, 10);
    assert.fail(`docs/spec-coverage.md is stale or edited by hand; run \`npm run spec-coverage\`. First differences:\n${changed.join("\n")}`);
  });

  it("covers the three documents, each with every class it should have", () => {
    for (const file of ["1-", "2-", "3-"]) assert.ok(coverage.entries.filter((e) => e.file.startsWith(file)).length >= 80, file);
    assert.ok(coverage.entries.length >= 900, `${coverage.entries.length} entries`);
    for (const c of ["working", "refused", "missing"])
      assert.ok(
        coverage.entries.some((e) => e.class === c),
        c,
      );
  });

  it("a documented flag accepted at its spec default is working, and the program's help documents it", async () => {
    const e = entry("2-", "--maxMessageSize", "hubs server");
    assert.equal(e.class, "working");
    assert.match(e.evidence, /^accepted \(`--maxMessageSize 1048576`\)/);
    const help = await runProgram("hubs", ["server", "--help"]);
    assert.match(help.stdout, /--maxMessageSize </);
  });

  it("a refused flag is refused with the program's own words", async () => {
    const e = entry("2-", "--trace_log_spans", "hubs server");
    assert.equal(e.class, "refused");
    const run = await runProgram("hubs", ["server", "--trace_log_spans=true"]);
    assert.equal(run.status, 2);
    assert.equal(e.evidence, run.stderr.trim());
  });

  it("a counter is working only as scraped under its spec name and type", () => {
    const e = entry("2-", "anchor_server_csr_count (Sum)", "mesh_ca");
    assert.equal(e.class, "working");
    assert.equal(e.evidence, "scraped: `# TYPE anchor_server_csr_count_total counter`");
    // A counter of the same list that disco-discovery does not export (it writes no orchestrator secrets) is not working there.
    assert.equal(entry("2-", "anchor_secret_controller_csr_err_count (Sum)", "disco-discovery").class === "working", false);
  });

  it("a meshctl command that needs an orchestrator is refused with its reason (exit 69), and so are its flags", async () => {
    const e = entry("3-", "`meshctl register <svcname> <ip> [name1:]port1 [name2:]port2 ...`", "meshctl register");
    assert.equal(e.class, "refused");
    const run = await runProgram("meshctl", ["register", "vm-svc", "10.0.0.1", "http:8080"]);
    assert.equal(run.status, 69);
    assert.equal(e.evidence, run.stderr.trim().split("\n")[0]);
    assert.equal(entry("3-", "register --labels / -l", "meshctl register").class, "refused");
  });

  it("an option the program does not know is missing, with the program's words", () => {
    const unknown = coverage.entries.filter((e) => e.class === "missing" && /unknown option/.test(e.evidence));
    for (const e of unknown) {
      const flag = /unknown option '(--[\w-]+)'/.exec(e.evidence)?.[1];
      assert.ok(flag && e.spec.includes(flag), `${e.spec}: ${e.evidence}`);
    }
  });
});
