// Spec 3's commands and flags, and spec 1's rows, classified from what
// meshctl did (meshctl.ts, policies.ts).
import { type Class, combine, type Entry } from "./classes.ts";
import type { CommandOutcome, MeshctlObservations, Run } from "./meshctl.ts";
import { type FieldOutcome, type ScenarioOutcome, writtenPath } from "./policies.ts";
import type { CommandItem } from "./spec3_model.ts";
import type { SpecDocument, SpecTableRow } from "./spec_rows.ts";

const q = (s: string) => `\`${s}\``;
const ran = (r: Run) => q(`meshctl ${r.args}`);

function commandClass(c: CommandOutcome | undefined, item: CommandItem): { class: Class; evidence: string } {
  if (!c) return { class: "unprobed", evidence: "not probed" };
  if (!c.help && !c.named) return { class: "missing", evidence: `\`meshctl ${item.path.join(" ")} --help\` does not name the command` };
  const aliases = [...c.aliases].map(([a, ok]) => (ok ? `alias ${q(a)}: the same command` : `alias ${q(a)}: missing`)).join("; ");
  const tail = aliases ? `; ${aliases}` : "";
  const r = c.run;
  if (r.status === 0)
    return {
      class: c.aliases.size && [...c.aliases.values()].some((ok) => !ok) ? "partial" : "working",
      evidence: `${ran(r)} exit 0${c.offline ? " (offline)" : ""}${tail}`,
    };
  if (r.status === 69) return { class: "refused", evidence: r.message };
  if (/use `meshctl experimental/.test(r.message)) return { class: "working", evidence: `${ran(r)}: ${r.message}` };
  return { class: "accepted", evidence: `${ran(r)} exit ${r.status}: ${r.message}${tail}` };
}

function flagClass(o: MeshctlObservations, c: CommandOutcome | undefined, key: string, flag: string): { class: Class; evidence: string } {
  const f = o.flags.get(`${key}|${flag}`);
  const given = (f?.given ?? []).flatMap((g) => g.split("="));
  if (!f) return { class: "unprobed", evidence: "not probed" };
  if (!f.run) {
    // The command refuses every form: its flags with it.
    return c?.run.status === 69 ? { class: "refused", evidence: `the command: ${c.run.message}` } : { class: "unprobed", evidence: "not run" };
  }
  const r = f.run;
  const help = f.documented ? `documented: ${f.documented.description}` : "not in --help";
  if (r.status === 0) return { class: "working", evidence: `${ran(r)} exit 0; ${help}` };
  if (/unknown option/.test(r.message)) return { class: "missing", evidence: r.message };
  if (r.status === 69) return { class: "refused", evidence: r.message };
  if (c && r.status === c.run.status && r.message === c.run.message) return { class: "accepted", evidence: `${ran(r)}: as without it: ${r.message}` };
  if (given.some((g) => r.message.includes(g))) return { class: "working", evidence: `checks its value: ${ran(r)}: ${r.message}` };
  return { class: "accepted", evidence: `${ran(r)} exit ${r.status}: ${r.message}; ${help}` };
}

export function classifyCommands(items: readonly CommandItem[], o: MeshctlObservations): Entry[] {
  const out: Entry[] = [];
  const FILE = "3-operator-cli.md";
  for (const item of items) {
    const key = item.path.join(" ");
    const c = o.commands.get(key);
    const label = item.path.length ? `meshctl ${key}` : "meshctl (every command)";
    if (item.path.length > 0 && !/group flags/.test(item.label))
      out.push({ file: FILE, section: item.section, spec: item.label.replace(/\|/g, "\\|"), program: label, ...commandClass(c, item) });
    for (const flag of item.flags) {
      out.push({
        file: FILE,
        section: item.section,
        spec: `${key ? `${key} ` : ""}${flag.flag}${flag.short ? ` / ${flag.short}` : ""}`,
        program: label,
        ...flagClass(o, c, key, flag.flag),
      });
    }
  }
  return out;
}

/** What spec 1's request-handling rules and errors expect, as simulate scenarios (test/cli/fixtures/simulate/) and the outcome each must show. */
type Expect = [id: string, want: "connection-failure" | number, xfcc?: boolean];
export const RULE_SCENARIOS: Readonly<Record<string, readonly Expect[]>> = {
  "1": [["rule1-auto-mtls", 200, true]],
  "2": [["rule2-server-without-sidecar", 200, false]],
  "3": [
    ["rule3-mesh-strict-plaintext-client", "connection-failure"],
    ["rule3-mesh-strict-proxied-client", 200],
    ["rule3-mesh-strict-proxied-to-legacy", 200],
    ["rule3-mesh-strict-plain-to-legacy", 200],
  ],
  "4": [
    ["rule4-namespace-strict", "connection-failure"],
    ["rule4-other-namespace-unaffected", 200],
  ],
  "5": [["rule5-workload-strict-with-mesh-mutual", 200]],
  "6": [
    ["rule6-port-level-service-port", 200],
    ["rule6-port-level-container-port", 200],
    ["rule6-unbound-port-ignored", "connection-failure"],
  ],
  "7": [
    ["rule7-workload-disable-with-destination-rule", 200],
    ["rule7-plaintext-client-accepted", 200],
  ],
  "8": [["rule8-no-token", 200]],
  "9": [["rule9-invalid-signature", 401]],
  "10": [["rule10-valid-token", 200]],
  "11": [
    ["rule11-before-expiry", 200],
    ["rule11-after-expiry", 401],
  ],
  "12": [["rule12-deny-without-token", 403]],
  "13": [
    ["rule13-matching-path-denied", 403],
    ["rule13-other-path-allowed", 200],
  ],
};
export const ERROR_SCENARIOS: ReadonlyArray<[RegExp, readonly Expect[]]> = [
  [/^Invalid bearer token/, [["rule9-invalid-signature", 401]]],
  [/^Expired bearer token/, [["rule11-after-expiry", 401]]],
  [/^DENY rule matched/, [["rule12-deny-without-token", 403]]],
  [/^Plain-text request to a STRICT/, [["rule3-mesh-strict-plaintext-client", "connection-failure"]]],
  [/^Unmatched route/, [["registry-only-fallthrough-502", 502]]],
];

export const scenarioIds = () => [...new Set([...Object.values(RULE_SCENARIOS), ...ERROR_SCENARIOS.map(([, e]) => e)].flat().map(([id]) => id))];

function judge(expects: readonly Expect[], got: ReadonlyMap<string, ScenarioOutcome>): { class: Class; evidence: string } {
  const parts = expects.map(([id, want, xfcc]) => {
    const o = got.get(id);
    if (!o) return { ok: false, text: `${id}: no result` };
    const seen = o.outcome === "connection-failure" ? "connection failure" : `HTTP ${o.status}`;
    const ok = (want === "connection-failure" ? o.outcome === "connection-failure" : o.status === want) && (xfcc === undefined || o.xfcc === xfcc);
    return {
      ok,
      text: `${id}: ${seen}${xfcc === undefined ? "" : o.xfcc ? ", X-Forwarded-Client-Cert received" : ", no X-Forwarded-Client-Cert"}${ok ? "" : ` (expected ${want === "connection-failure" ? "a connection failure" : want})`}`,
    };
  });
  const ok = parts.filter((p) => p.ok).length;
  return {
    class: ok === parts.length ? "working" : ok === 0 ? "missing" : "partial",
    evidence: `\`meshctl x simulate\`: ${parts.map((p) => p.text).join("; ")}`,
  };
}

export function classifyPolicyRows(
  doc: SpecDocument,
  fields: readonly FieldOutcome[],
  samples: ReadonlyMap<string, readonly string[]>,
  versions: ReadonlyArray<{ row: SpecTableRow; kind: string; apiVersion: string; complaints: readonly string[] }>,
  scenarios: ReadonlyMap<string, ScenarioOutcome>,
): Entry[] {
  const FILE = "1-policy-and-client-config.md";
  const out: Entry[] = [];
  const byRow = new Map(fields.map((f) => [f.probe.row, f]));
  for (const row of doc.rows) {
    const add = (spec: string, program: string, c: { class: Class; evidence: string }) => out.push({ file: FILE, section: row.section, spec, program, ...c });
    const f = byRow.get(row);
    if (f) {
      const path = writtenPath(f.probe.path);
      const own = (l: string) => l.includes(`${path}:`) || l.includes(`${path}.`) || l.includes(`${path}[`);
      const refusedGood = f.goodComplaints.filter(own);
      const checked = f.badComplaints.filter(own);
      const where = `${f.probe.kind} ${path}`;
      if (refusedGood.length)
        add(row.cells[0], "meshctl validate", {
          class: /unknown field/.test(refusedGood[0]) ? "missing" : "partial",
          evidence: `${where} = ${JSON.stringify(f.probe.good)}: ${refusedGood[0]}`,
        });
      else if (checked.length)
        add(row.cells[0], "meshctl validate", {
          class: "working",
          evidence: `${where} = ${JSON.stringify(f.probe.good)} accepted; a wrong value is refused: ${checked[0]}`,
        });
      else
        add(row.cells[0], "meshctl validate", {
          class: "accepted",
          evidence: `${where} = ${JSON.stringify(f.probe.good)} accepted; a wrong value (${JSON.stringify(f.probe.bad)}) is accepted too`,
        });
      continue;
    }
    if (row.header[0] === "Resource" && samples.has(row.cells[0])) {
      const complaints = samples.get(row.cells[0])!;
      add(
        row.cells[0],
        "meshctl validate",
        complaints.length
          ? { class: "partial", evidence: complaints.join("; ") }
          : { class: "working", evidence: "a document with every field listed validates" },
      );
      continue;
    }
    if (row.header[0] === "#") {
      const expects = RULE_SCENARIOS[row.cells[0]];
      add(`${row.cells[0]}. ${row.cells[1]}`, "meshctl x simulate", expects ? judge(expects, scenarios) : { class: "unprobed", evidence: "no scenario" });
      continue;
    }
    if (row.section === "Errors") {
      const match = ERROR_SCENARIOS.find(([re]) => re.test(row.cells[0]));
      add(
        row.cells[0],
        "meshctl x simulate",
        match
          ? judge(match[1], scenarios)
          : { class: "unprobed", evidence: "needs a hub that stops answering mid-run: not probed here (test/hub covers fail policies)" },
      );
      continue;
    }
    if (row.section === "Versioning") {
      const mine = versions.filter((v) => v.row === row);
      const classes = mine.map((v) => (v.complaints.some((c) => /apiVersion|kind/.test(c)) ? "missing" : "working") as Class);
      add(row.cells[0], "meshctl validate", {
        class: combine(classes),
        evidence: mine.map((v, i) => `${v.apiVersion} ${v.kind}: ${classes[i] === "working" ? "known" : v.complaints[0]}`).join("; "),
      });
      continue;
    }
    if (row.section === "Limits") {
      const path = row.cells[0].split(".").pop()!;
      const probe = fields.find((x) => x.probe.path.endsWith(`.${path}`) || x.probe.path.endsWith(`.${path.split(" / ")[0]}`));
      add(row.cells[0], "meshctl validate", {
        class: probe && probe.goodComplaints.length === 0 ? "accepted" : "unprobed",
        evidence: probe ? `the field is accepted by validate; the default and minimum are applied at run time, not observed by this script` : "not probed",
      });
      continue;
    }
    add(row.cells[0], "", { class: "unprobed", evidence: "no probe for this table" });
  }
  return out;
}

/** Each kind named in a Versioning row, with the group and version of that row. */
export function versionProbes(doc: SpecDocument): Array<{ row: SpecTableRow; kind: string; apiVersion: string }> {
  return doc.rows
    .filter((r) => r.section === "Versioning")
    .flatMap((row) => {
      const group = /`([a-z]+)\.<mesh_domain>`/.exec(row.cells[0])?.[1];
      const kinds = (/\(([^)]*)\)/.exec(row.cells[0])?.[1] ?? "").split(/,\s*/).filter(Boolean);
      return kinds.map((kind) => ({ row, kind, apiVersion: `${group}.mesh.io/${row.cells[1].replace(/`/g, "")}` }));
    });
}
